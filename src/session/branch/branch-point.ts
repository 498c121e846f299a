/**
 * Where a branch is cut (`--at`): a message uuid (or an unambiguous prefix of at least 8 hex
 * digits) of a Claude Code transcript, or a turn number — the N-th prompt the person typed,
 * 1-based — for either agent.
 */
import { UsageError } from '../../errors.js';

export type BranchPoint = { kind: 'uuid'; uuid: string } | { kind: 'turn'; turn: number };

const UUID_OR_PREFIX = /^[0-9a-f]{8}(?:-?[0-9a-f]){0,24}$/i;

/** Parses `--at`: digits are a turn number, hex (with hyphens) a uuid or uuid prefix. */
export function parseBranchPoint(at: string | number): BranchPoint {
  if (typeof at === 'number') {
    if (!Number.isInteger(at) || at < 1) throw new UsageError(`--at ${at}: a turn number is a positive integer (1 = the first prompt)`);
    return { kind: 'turn', turn: at };
  }
  const s = at.trim();
  if (/^\d+$/.test(s) && s.length < 8) return parseBranchPoint(Number(s));
  if (UUID_OR_PREFIX.test(s)) return { kind: 'uuid', uuid: s.toLowerCase() };
  throw new UsageError(`--at ${JSON.stringify(at)}: expected a message uuid (or its first 8+ hex digits) or a turn number`, {
    hint: 'turn numbers count the prompts you typed, from 1; uuids are the `uuid` fields of the transcript lines',
  });
}
