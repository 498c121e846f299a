/**
 * `ctxvm demo` is a list of sections (sections.ts), each a small program over a shared temporary
 * folder that returns a plain result object: the CLI prints each section's rendering as it
 * finishes, or one JSON document holding every section's result under its name. Sections never
 * print, and load their engines inside `run`, so adding one costs the others nothing.
 */

/** What every section gets. */
export interface DemoContext {
  /** The demo's temporary folder (removed afterwards unless --keep); a section works in subfolders of it. */
  home: string;
  /** IANA time zone for dates, e.g. "Asia/Shanghai". */
  timeZone: string;
  /** "Now" for the whole run, Unix ms. */
  nowMs: number;
}

/** One section of the demo. */
export interface DemoSection<R = unknown> {
  /** Key of the result in `ctxvm demo --json` (a JavaScript identifier, e.g. "sessions"). */
  name: string;
  /** Heading of the section's text output. */
  title: string;
  /** Does the work; returns numbers and names only (no printing). */
  run(ctx: DemoContext): Promise<R>;
  /** Human-readable lines (without the heading), short. */
  render(result: R): string[];
  /** Checks that failed (the demo then exits 1); none when everything held. */
  problems?(result: R): string[];
}
