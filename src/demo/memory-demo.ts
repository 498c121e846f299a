/**
 * The memory side of `ctxvm demo`: the seed conversation in Chinese, run through a real
 * MemoryManager over a SQLite file in the demo's temporary home, with the offline responder.
 */
import { join } from 'node:path';
import { zonedParts, zonedTimeToInstant, type TimeZone } from '../core/time-zone.js';
import type { ContextLayer } from '../memory/context.js';

/** The seed scenario of the Step 4 issue. */
export const MEMORY_DEMO_MESSAGES = ['记得下午三点要开项目评审会。', '另外，下班前需要把周报发给我。', '下午后还有啥要做到？', '把写周报标记为完成'] as const;

/** The seed scenario's question (what is left to do), which changes no memory. */
export const MEMORY_DEMO_QUESTION = MEMORY_DEMO_MESSAGES[2];

/** One turn of the memory demo. */
export interface MemoryDemoTurn {
  message: string;
  response: string;
  intent: string;
  confidence: number;
  applied: { action: string; kind: string; text: string }[];
  contextText: string;
  contextTokens: number;
  fullHistoryTokens: number;
  layers: Pick<ContextLayer, 'name' | 'tokens'>[];
  /** Whether the stable prefix (system, profile, project) equals the previous turn's. */
  prefixStable: boolean | null;
  latencyMs: number;
}

/** What the memory demo did. */
export interface MemoryDemoResult {
  userId: string;
  timeZone: TimeZone;
  /** The fixed "now" of the first message, ISO-8601. */
  startedAt: string;
  turns: MemoryDemoTurn[];
  tasks: { title: string; status: string; due: string | null }[];
}

/** Runs the seed conversation in `home`; messages are one minute apart from 09:30 today in `timeZone`. */
export async function runMemoryDemo(home: string, timeZone: TimeZone, nowMs: number): Promise<MemoryDemoResult> {
  const { openMemoryStore } = await import('../memory/store/sql-memory-store.js');
  const { createMemoryManager } = await import('../memory/manager.js');
  const { createHotCache } = await import('../store/open-hot-cache.js');
  const { formatLocalTime } = await import('../memory/format-time.js');
  const today = zonedParts(nowMs, timeZone);
  const start = zonedTimeToInstant({ year: today.year, month: today.month, day: today.day, hour: 9, minute: 30 }, timeZone);
  // the warm database of the demo's CTXVM_HOME (shared with the sessions section), so that
  // `ctxvm demo --serve` serves this user too
  const store = await openMemoryStore({ db: join(home, 'ctxvm', 'ctxvm.db') });
  const hot = await createHotCache({ redisUrl: undefined });
  const userId = 'demo-user';
  try {
    const manager = createMemoryManager({ store, hot, defaultTimeZone: timeZone });
    const turns: MemoryDemoTurn[] = [];
    let previousPrefix: string | null = null;
    for (const [i, message] of MEMORY_DEMO_MESSAGES.entries()) {
      const r = await manager.processMessage({ userId, text: message, now: start + i * 60_000 });
      const prefix = r.context.text.slice(0, r.context.stablePrefixChars);
      turns.push({
        message,
        response: r.response,
        intent: r.extraction.intent,
        confidence: r.extraction.confidence,
        applied: r.applied.map((a) => ({ action: a.action, kind: a.kind, text: a.text })),
        contextText: r.context.text,
        contextTokens: r.context.tokens,
        fullHistoryTokens: r.metrics.fullHistoryTokens,
        layers: r.context.layers.map((l) => ({ name: l.name, tokens: l.tokens })),
        prefixStable: previousPrefix === null ? null : previousPrefix === prefix,
        latencyMs: r.metrics.latencyMs.total,
      });
      previousPrefix = prefix;
    }
    const tasks = (await manager.user(userId).listTasks()).map((t) => ({ title: t.title, status: t.status, due: t.dueAtMs === null ? null : formatLocalTime(t.dueAtMs, timeZone) }));
    return { userId, timeZone, startedAt: new Date(start).toISOString(), turns, tasks };
  } finally {
    await hot.close();
    await store.close();
  }
}

/** Human-readable lines for the memory demo. */
export function renderMemoryDemo(r: MemoryDemoResult): string[] {
  const lines = [`memory engine — user ${r.userId}, ${String(r.timeZone)}, from ${r.startedAt}`];
  for (const t of r.turns) {
    lines.push('', `> ${t.message}`, `  ${t.response.replace(/\n/g, '\n  ')}`);
    lines.push(`  [${t.intent} ${t.confidence.toFixed(2)}${t.applied.length ? ' · ' + t.applied.map((a) => `${a.action} ${a.kind} "${a.text}"`).join(', ') : ''}]`);
    lines.push(`  context ${t.contextTokens} tokens (${t.layers.filter((l) => l.tokens > 0).map((l) => `${l.name} ${l.tokens}`).join(', ')}) vs full history ${t.fullHistoryTokens}${t.prefixStable === null ? '' : t.prefixStable ? ' · cache-stable prefix unchanged' : ' · prefix changed (memory changed)'}`);
    lines.push(...t.contextText.split('\n').map((l) => `    │ ${l}`));
  }
  lines.push('', 'tasks now:', ...r.tasks.map((t) => `  [${t.status}] ${t.title}${t.due ? ` — due ${t.due}` : ''}`));
  return lines;
}
