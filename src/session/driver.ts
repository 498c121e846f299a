/**
 * One interface per agent format, so commands and the library treat Claude Code and Codex
 * sessions alike: load (reconstruct + validate) and trim.
 */
import type { ObjectStore } from '../store/object-store.js';
import type { TokenCounter } from '../text/tokens.js';
import type { AgentContext, AgentKind } from './context-model.js';
import type { IdSource } from './trim/id-object.js';
import type { TrimPolicy } from './trim/policy.js';

export interface ValidationFinding {
  rule: string;
  /** 1-based file line (0 when it concerns the whole file). */
  line: number;
  message: string;
  severity: 'error' | 'warning';
}

export interface LoadedSession {
  agent: AgentKind;
  file: string;
  sessionId?: string;
  cwd?: string;
  context: AgentContext;
  findings: ValidationFinding[];
  /** Lines in the file (JSON and bad ones; blank lines not counted). */
  lines: number;
  bytes: number;
}

export interface DriverTrimInput {
  input: string;
  output: string;
  store: ObjectStore;
  policy: TrimPolicy;
  tokens: TokenCounter;
  /** Checks the output (a temporary file) before it is committed: problems refuse it (drivers without `findsOwnTrimFindings`). */
  check?: (tempPath: string) => Promise<string[]>;
  /**
   * Judges the output before it is committed, from the findings of the input and of the output
   * that a driver with `findsOwnTrimFindings` finds itself: throws to refuse it.
   */
  judge?: (before: ValidationFinding[], after: ValidationFinding[]) => void;
  onProgress?: (bytesDone: number, bytesTotal: number, pass: 1 | 3) => void;
  /** The input is a branch whose uuids derive from its source's: store its ids as the source's. */
  idSource?: IdSource;
  signal?: AbortSignal;
}

export interface DriverTrimStats {
  inputBytes: number;
  inputLines: number;
  outputBytes: number;
  outputLines: number;
  removedLines: number;
  changedLines: number;
  objects: number;
  pagedOutBytes: number;
  counters: Record<string, number>;
  holder: string;
  /** The input's and the output's findings, from a driver with `findsOwnTrimFindings`. */
  findings?: { before: ValidationFinding[]; after: ValidationFinding[] };
  /**
   * The input loaded in full (what `load(input)` gives), from what the trim read of it already
   * (its index: the file is not scanned again), when the driver can. For one call.
   */
  loadInput?: (options?: Pick<LoadOptions, 'signal' | 'onProgress'>) => Promise<LoadedSession>;
}

export interface LoadOptions {
  signal?: AbortSignal;
  /** Called as the file is read (its first read), with the bytes read so far. */
  onProgress?: (bytesRead: number) => void;
  /**
   * Load for the findings only: the context may hold stand-ins for long texts (drivers that keep
   * memory flat this way say so), so it must not be counted or shown. Same findings either way.
   */
  lean?: boolean;
}

export interface SessionDriver {
  readonly agent: AgentKind;
  /**
   * True when `trim` finds the input's and the output's findings itself (lean, from the reads it
   * makes anyway) and judges with `judge`; otherwise the caller loads both and passes `check`.
   */
  readonly findsOwnTrimFindings?: boolean;
  load(file: string, options?: LoadOptions): Promise<LoadedSession>;
  trim(input: DriverTrimInput): Promise<DriverTrimStats>;
}
