/**
 * `UserMemoryStore.turnNeighbourhoods` on PostgreSQL: every asked-for turn and its neighbours in
 * ONE statement (a LATERAL pair of index walks per turn), where the portable version in
 * turns.ts issues one or two statements per batch of turns and orders them in memory — a rebuild
 * asks for ~50 turns, and on PostgreSQL each statement is a network round trip. Same result: `self` and up to `before` earlier and `after`
 * later turns of the user, in (at_ms, seq) order.
 */
import type { Turn } from '../model.js';
import type { UserScope } from './context.js';
import { ID_BATCH, placeholders, str, type Row } from './rows.js';
import { wholeCount, TURN_COLUMNS as COLUMNS, turnFromRow } from './turns.js';

/** `turnNeighbourhoods` in one statement per `ID_BATCH` ids. */
export async function turnNeighbourhoodsPostgres(scope: UserScope, ids: readonly string[], before: number, after: number): Promise<Map<string, Turn[]>> {
  const { userId } = scope;
  const wanted = [...new Set(ids.filter((id) => typeof id === 'string'))];
  const b = wholeCount(before);
  const a = wholeCount(after);
  const out = new Map<string, Turn[]>();
  // The limits are literals (few distinct values), as in turns.ts.
  const sides: string[] = [];
  if (b > 0) sides.push(`(SELECT ${COLUMNS}, seq, -1 AS side FROM memory_turns n WHERE n.user_id = s.user_id AND (n.at_ms, n.seq) < (s.at_ms, s.seq) ORDER BY n.at_ms DESC, n.seq DESC LIMIT ${b})`);
  if (a > 0) sides.push(`(SELECT ${COLUMNS}, seq, 1 AS side FROM memory_turns n WHERE n.user_id = s.user_id AND (n.at_ms, n.seq) > (s.at_ms, s.seq) ORDER BY n.at_ms, n.seq LIMIT ${a})`);
  for (let i = 0; i < wanted.length; i += ID_BATCH) {
    const batch = wanted.slice(i, i + ID_BATCH);
    const selfSql = `SELECT user_id, ${COLUMNS}, seq FROM memory_turns WHERE user_id = ? AND id IN (${placeholders(batch.length)})`;
    // One row per hit (side 0, the hit itself) and one per neighbour, grouped by hit, in time order.
    const sql =
      sides.length === 0
        ? `SELECT s.id AS hit, ${COLUMNS}, seq, 0 AS side FROM (${selfSql}) s`
        : `SELECT s.id AS hit, s.id, s.role, s.speaker, s.text, s.at_ms, s.session_id, s.seq, 0 AS side FROM (${selfSql}) s
           UNION ALL
           SELECT s.id AS hit, n.id, n.role, n.speaker, n.text, n.at_ms, n.session_id, n.seq, n.side
             FROM (${selfSql}) s CROSS JOIN LATERAL (${sides.join(' UNION ALL ')}) n`;
    const params = sides.length === 0 ? [userId, ...batch] : [userId, ...batch, userId, ...batch];
    const rows = await scope.ctx.db.all<Row>(`${sql} ORDER BY hit, at_ms, seq`, params);
    const byHit = new Map<string, Row[]>();
    for (const r of rows) {
      const hit = str(r.hit);
      const list = byHit.get(hit) ?? [];
      list.push(r);
      byHit.set(hit, list);
    }
    for (const [hit, list] of byHit) out.set(hit, list.map((r) => turnFromRow(userId, r)));
  }
  return out;
}
