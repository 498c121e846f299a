/** `ctxvm demo`'s sessions section: runs sessions-demo.ts and renders it in a few aligned lines. */
import { formatBytes, formatInt, formatPercent } from '../cli/format.js';
import { renderDag, type DagNode } from '../session/dag/tree.js';
import type { DemoSection } from './section.js';
import { runSessionsDemo, sessionsDemoProblems, type SessionsDemoResult } from './sessions-demo.js';

const step = (name: string, ...lines: string[]): string[] => lines.map((l, i) => `${(i === 0 ? name : '').padEnd(10)}${l}`);
const short = (id: string) => id.slice(0, 8);
const minus = (ratio: number | null) => (ratio === null ? '' : ` (−${formatPercent(ratio)})`);
/** Trim counters that are payloads moved to the object store (the others are repairs). */
const PAGED_LABELS: Record<string, [one: string, many: string]> = {
  toolResults: ['tool result', 'tool results'],
  toolInputs: ['tool input', 'tool inputs'],
  images: ['image', 'images'],
  thinking: ['thinking block', 'thinking blocks'],
  toolUseResults: ['toolUseResult copy', 'toolUseResult copies'],
};

function treeLabel(node: DagNode): string {
  return node.kind === 'snapshot' ? `${node.name}  snapshot of ${short(node.sessionId)}, ${formatBytes(node.bytes ?? 0)}` : `${node.name}  branch → new session ${short(node.sessionId)}${node.trimmed ? ' (trimmed)' : ''}`;
}

/** Human-readable lines for the sessions demo. */
export function renderSessionsDemo(r: SessionsDemoResult): string[] {
  const a = r.analyze;
  const composition = Object.entries(a.breakdown)
    .filter(([, n]) => n > 0)
    .sort((x, y) => y[1] - x[1])
    .map(([c, n]) => `${c} ${formatInt(n)}`)
    .join(' · ');
  const paged = Object.entries(r.trim.pagedOut)
    .filter(([k, n]) => n > 0 && PAGED_LABELS[k])
    .map(([k, n]) => `${n} ${PAGED_LABELS[k]![n === 1 ? 0 : 1]}`)
    .join(', ');
  const b = r.branch;
  const out = [
    ...step('session', `a generated Claude Code session: ${r.session.lines} lines, ${formatBytes(r.session.bytes)}`),
    ...step('analyze', `resumes with ${a.messages} messages, ${formatInt(a.tokens)} tokens (${a.tokenizer})`, composition),
    ...step('trim', `${formatInt(r.trim.input.tokens ?? 0)} → ${formatInt(r.trim.output.tokens ?? 0)} tokens${minus(r.trim.reduction)}, ${formatBytes(r.trim.input.bytes)} → ${formatBytes(r.trim.output.bytes)}`, ...(paged ? [`paged out: ${paged}`] : [])),
    ...step('validate', r.validate.valid ? 'valid: every tool call answered, roles alternate, the chain is intact' : `INVALID (${r.validate.errors} errors)`),
    ...step('restore', r.restore.identical ? `byte-identical to the original (${formatBytes(r.restore.bytes)})` : 'DIFFERS from the original'),
    ...step('snapshot', `${r.snapshot.name} (${short(r.snapshot.id)}): ${r.snapshot.files} file(s), ${formatBytes(r.snapshot.bytes)} stored as ${formatBytes(r.snapshot.storedBytes)} in ${r.snapshot.objects} objects`),
    ...step('branch', `${b.name}: new session ${b.sessionId}, ${formatInt(b.tokens.before ?? 0)} → ${formatInt(b.tokens.after ?? 0)} tokens${minus(b.tokens.reduction)}`, `resume it with: ${b.resume}`),
    ...step('later', `one more question on the branch (+${r.laterSnapshot.addedLines} lines${r.laterSnapshot.branchValid ? ', still valid' : ', INVALID'}), snapshot ${r.laterSnapshot.name}: ${r.laterSnapshot.newObjects} new objects, ${formatBytes(r.laterSnapshot.newStoredBytes)} added`),
    ...step('tree', ...renderDag(r.tree, treeLabel)),
  ];
  if (r.pageIn) {
    const p = r.pageIn;
    out.push(...step('page-in', `${p.ref} → ${formatInt(p.chars)} characters${p.inOriginal ? ', exactly as in the original' : ', NOT as in the original'}`, `"${p.head.length > 70 ? p.head.slice(0, 69) + '…' : p.head}"`));
  }
  const du = r.du;
  out.push(...step('du', `${du.snapshots} snapshots, ${du.branches} branch: ${formatBytes(du.logicalBytes)} logical, ${formatBytes(du.storedBytes)} stored (${du.ratio.toFixed(2)}x the largest snapshot; ${du.savings.toFixed(1)}x smaller than copies)`));
  if (r.cache) out.push(...step('caching', `${r.cache.model}, 5-minute TTL, warm cache: the trim pays back after call ${r.cache.breakEvenCall ?? 'never'}, then saves $${r.cache.savingPerCallUsd.toFixed(4)} per call`));
  return out;
}

/** `ctxvm demo`'s sessions section. */
export const sessionsSection: DemoSection<SessionsDemoResult> = {
  name: 'sessions',
  title: 'Sessions: analyze → trim → validate → restore → snapshot → branch → tree → page-in → du',
  run: runSessionsDemo,
  render: renderSessionsDemo,
  problems: sessionsDemoProblems,
};
