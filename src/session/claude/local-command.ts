/**
 * Local-command records (`/exit`, `/model` …) at the end of a session: Claude Code 2.1.328 does
 * not append "No response requested." after a record introduced by the tagged caveat; the new
 * prompt joins the record's user message instead (docs/resume-model.md §1.8.2).
 */
import type { ClaudeLine } from './types.js';

type RecordKind = 'record' | 'output' | 'caveat' | 'bareRecord';

/** Claude Code's classification of a user line by its last text. */
function recordKind(v: ClaudeLine): RecordKind | undefined {
  if (v.type !== 'user' || v.promptSource !== undefined) return undefined;
  const c = v.message?.content;
  let t: unknown;
  if (typeof c === 'string') t = c;
  else if (Array.isArray(c)) {
    for (let i = c.length - 1; i >= 0 && t === undefined; i--) if (c[i]?.type === 'text') t = c[i]!.text;
  }
  if (typeof t !== 'string') return undefined;
  if (t.startsWith('<command-name>')) return 'record';
  if (t.startsWith('<local-command-stdout>') || t.startsWith('<local-command-stderr>')) return 'output';
  if (t.startsWith('<local-command-caveat>')) return v.isMeta === true ? 'caveat' : undefined;
  if (v.isMeta !== true && t.trim().startsWith('/')) return 'bareRecord';
  return undefined;
}

const skipped = (v: ClaudeLine) => v.type === 'system' || v.type === 'progress' || v.type === 'attachment';

/** True when the loaded lines (chain order) end with a caveat-introduced local-command record. */
export function endsWithLocalCommandRecord(values: ClaudeLine[]): boolean {
  let i = values.length - 1;
  while (i >= 0 && skipped(values[i]!)) i--;
  if (i < 0 || recordKind(values[i]!) === undefined) return false;
  let sawRecord = false;
  let bareAt: number | undefined;
  let allMeta = true;
  for (let y = i; y >= 0; y--) {
    const v = values[y]!;
    if (skipped(v)) continue;
    const kind = recordKind(v);
    if (kind === 'caveat') return bareAt === undefined || Date.parse(String(v.timestamp)) >= bareAt;
    if (kind === undefined || sawRecord) break;
    sawRecord = kind === 'record' || kind === 'bareRecord';
    if (kind === 'bareRecord') bareAt = Date.parse(String(v.timestamp));
    allMeta &&= v.type === 'user' && v.isMeta === true;
  }
  return allMeta;
}
