/**
 * Cheap reads of session files for the discovery index: the id, the working directory, the title
 * and a message count, without reconstructing anything. Large lines are skimmed (long strings
 * are skipped, not decoded). Session logs only ever grow by appending, so a probe can resume
 * from where the last one stopped: the state at the end of the last complete line is kept in the
 * index with a fingerprint of the bytes just before it, and a file that grew with that
 * fingerprint intact is read from there on.
 *
 * Messages mean what they mean everywhere in ctxvm: the messages the agent resends when the
 * session is resumed (`session analyze` counts them exactly). Read quickly here: Claude Code —
 * after the last compaction boundary, one message per change of speaker among the `user` and
 * `assistant` lines outside sidechains and meta lines (the API merges consecutive lines of one
 * role); Codex — the history's items (every `response_item` but ghost snapshots), replaced at a
 * `compacted` line and cut back by a rollback, as Codex rebuilds it. A conversation that was
 * rewound in place, or that the agent repairs on resume, can count a few more or fewer here.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { skimJson } from '../../core/json-skim.js';
import { PROBE_STATE_VERSION } from './probe-version.js';
import { sha256Hex } from '../../core/hash.js';
import type { AgentKind } from '../context-model.js';
import { isUserTurnItem, type CodexItem } from '../codex/types.js';

/** Lines longer than this are skimmed rather than parsed, bytes. */
const SKIM_ABOVE_BYTES = 8 * 1024;
const READ_BLOCK_BYTES = 1 << 20;
/** Bytes before the resume offset that must be unchanged for an incremental probe. */
const FINGERPRINT_BYTES = 256;
const LF = 0x0a;

/** What the probe tracks; serialised into the index so a grown file is read from its old end. */
export interface ProbeState {
  /**
   * 4 since the listing carries the exact count (`resent`); rows of older states are read again
   * from the start.
   */
  v: 4;
  agent: AgentKind;
  sessionId?: string;
  cwd?: string;
  /** Latest `summary` line text (Claude Code). */
  summary?: string;
  /** Latest `custom-title` (Claude Code `/rename`); wins over the others. */
  customTitle?: string;
  /** Latest `ai-title` (the title Claude Code gives a session itself); wins over `summary`. */
  aiTitle?: string;
  /** Codex: `session_meta.payload.model_provider` (Codex resumes only with that provider). */
  modelProvider?: string;
  messages: number;
  lines: number;
  /** Claude Code: the role of the last message line counted (a run of one role is one message). */
  lastRole?: 'user' | 'assistant';
  /** Codex: the history positions of its user turns (what a compaction keeps, where a rollback cuts). */
  userTurns?: number[];
  /** sha256 of the bytes just before the resume offset. */
  fingerprint?: string;
  /**
   * The exact count of messages the agent resends, from the reconstruction `session analyze` uses
   * (set by the index for files small enough to reconstruct on every change; a resumed probe
   * drops it, since it does not carry over to the grown file).
   */
  resent?: number;
}

/** Result of a probe. */
export interface ProbeResult {
  /** State after the last complete line (what to persist). */
  state: ProbeState;
  /** End of the last complete line, bytes. */
  offset: number;
  /** Fields as they read now (including an unterminated last line, when it parses). */
  view: ProbeState;
  /** Offset the read started at: 0, or the previous probe's end when it could be resumed. */
  resumedFrom: number;
}

/** A fresh state for `agent`. */
export function initialProbeState(agent: AgentKind): ProbeState {
  return { v: PROBE_STATE_VERSION, agent, messages: 0, lines: 0 };
}

/** Parses a stored state; undefined if it is unusable (then the file is read from the start). */
export function parseProbeState(text: string, agent: AgentKind): ProbeState | undefined {
  try {
    const s = JSON.parse(text) as ProbeState;
    return s && s.v === PROBE_STATE_VERSION && s.agent === agent && typeof s.messages === 'number' ? s : undefined;
  } catch {
    return undefined;
  }
}

type Json = Record<string, unknown>;

function parseLine(bytes: Buffer): Json | undefined {
  try {
    const v = bytes.length > SKIM_ABOVE_BYTES ? skimJson(bytes, 1024) : JSON.parse(bytes.toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
  } catch {
    return undefined; // bad lines are the validator's business, not the index's
  }
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** Applies one parsed line to the state. */
export function applyLine(state: ProbeState, line: Json): void {
  state.lines++;
  if (state.agent === 'codex') {
    const payload = (line.payload ?? {}) as Json;
    if (line.type === 'session_meta') {
      state.sessionId ??= text(payload.id);
      state.cwd ??= text(payload.cwd);
      state.modelProvider ??= text(payload.model_provider);
    } else if (line.type === 'turn_context') {
      state.cwd ??= text(payload.cwd);
    } else if (line.type === 'response_item' && payload.type !== 'ghost_snapshot') {
      if (isCodexUserTurn(payload)) (state.userTurns ??= []).push(state.messages);
      state.messages++;
    } else if (line.type === 'compacted') {
      if (Array.isArray(payload.replacement_history)) {
        const kept = (payload.replacement_history as unknown[]).filter((x): x is Json => Boolean(x) && typeof x === 'object');
        state.messages = kept.length;
        state.userTurns = kept.flatMap((x, i) => (isCodexUserTurn(x) ? [i] : []));
      } else {
        // the user turns so far, then the summary
        state.messages = (state.userTurns?.length ?? 0) + 1;
        state.userTurns = (state.userTurns ?? []).map((_, i) => i);
      }
    } else if (line.type === 'event_msg' && payload.type === 'thread_rolled_back') {
      const n = typeof payload.num_turns === 'number' ? payload.num_turns : 0;
      const turns = state.userTurns ?? [];
      if (n > 0 && turns.length > 0) {
        const cut = turns[Math.max(0, turns.length - n)]!;
        state.messages = cut;
        state.userTurns = turns.filter((i) => i < cut);
      }
    }
    return;
  }
  state.sessionId ??= text(line.sessionId);
  state.cwd ??= text(line.cwd);
  const type = line.type;
  if (type === 'summary') {
    state.summary = text(line.summary) ?? state.summary;
    return;
  }
  if (type === 'custom-title') {
    state.customTitle = text(line.customTitle) ?? text(line.title) ?? state.customTitle;
    return;
  }
  if (type === 'ai-title') {
    state.aiTitle = text(line.aiTitle) ?? text(line.title) ?? state.aiTitle;
    return;
  }
  if (type === 'system' && line.subtype === 'compact_boundary') {
    // the agent resends only what follows the last boundary
    state.messages = 0;
    state.lastRole = undefined;
    return;
  }
  if (line.isSidechain === true || line.isMeta === true) return;
  if (type === 'user' || type === 'assistant') {
    if (state.lastRole !== type) state.messages++;
    state.lastRole = type;
  }
}

/** A Codex user turn, by Codex's own rule (injected context such as the environment is not one). */
function isCodexUserTurn(item: Json): boolean {
  return isUserTurnItem(item as CodexItem);
}

async function fingerprintAt(handle: FileHandle, offset: number): Promise<string> {
  const start = Math.max(0, offset - FINGERPRINT_BYTES);
  const buf = Buffer.alloc(offset - start);
  if (buf.length > 0) await handle.read(buf, 0, buf.length, start);
  return sha256Hex(buf);
}

/** Options of `probeSessionFile`. */
export interface ProbeOptions {
  agent: AgentKind;
  /** File size to read up to (the size just stat'ed), bytes. */
  size: number;
  /** A previous probe to resume from, if the file only grew since. */
  resume?: { offset: number; state: ProbeState };
  /** Stop after the first complete line (subagent transcripts: only the id matters). */
  firstLineOnly?: boolean;
}

/** Probes a session file, resuming from a previous probe when its fingerprint still matches. */
export async function probeSessionFile(path: string, options: ProbeOptions): Promise<ProbeResult> {
  const handle = await open(path, 'r');
  try {
    let state = initialProbeState(options.agent);
    let offset = 0;
    const resume = options.resume;
    if (resume && resume.offset <= options.size && resume.state.fingerprint && resume.state.fingerprint === (await fingerprintAt(handle, resume.offset))) {
      state = structuredClone(resume.state);
      delete state.resent;
      offset = resume.offset;
    }
    const resumedFrom = offset;
    let carry: Buffer[] = [];
    let carryBytes = 0;
    let position = offset;
    let stop = false;
    while (position < options.size && !stop) {
      const buf = Buffer.allocUnsafe(Math.min(READ_BLOCK_BYTES, options.size - position));
      const { bytesRead } = await handle.read(buf, 0, buf.length, position);
      if (bytesRead === 0) break;
      const block = buf.subarray(0, bytesRead);
      position += bytesRead;
      let from = 0;
      for (let nl = block.indexOf(LF); nl !== -1; nl = block.indexOf(LF, from)) {
        let line = block.subarray(from, nl);
        if (carryBytes > 0) {
          line = Buffer.concat([...carry, line]);
          carry = [];
          carryBytes = 0;
        }
        const value = line.length > 0 ? parseLine(line) : undefined;
        if (value) applyLine(state, value);
        offset += line.length + 1;
        from = nl + 1;
        if (options.firstLineOnly && value) {
          stop = true;
          break;
        }
      }
      if (!stop && from < block.length) {
        carry.push(block.subarray(from));
        carryBytes += block.length - from;
      }
    }
    const view = structuredClone(state);
    if (!stop && carryBytes > 0) {
      const value = parseLine(Buffer.concat(carry));
      if (value) applyLine(view, value);
    }
    state.fingerprint = await fingerprintAt(handle, offset);
    view.fingerprint = state.fingerprint;
    // Claude Code answers a conversation that ends on the user's side with an injected reply
    if (view.agent === 'claude' && view.lastRole === 'user') view.messages++;
    return { state, offset, view, resumedFrom };
  } finally {
    await handle.close();
  }
}

