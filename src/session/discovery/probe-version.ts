/**
 * Version of the probe state stored in the sessions index (probe.ts); index rows of another
 * version are read again. Its own module so that a warm listing, which reads no file, can check
 * rows without loading the prober.
 */
export const PROBE_STATE_VERSION = 4;
