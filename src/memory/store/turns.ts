/**
 * Raw turns of one user: appended once (an existing id is left unchanged), indexed for search,
 * read back by id, by recency, and around one turn in time order (`at_ms`, then creation order).
 */
import { UsageError } from '../../errors.js';
import type { SqlValue } from '../../store/warm/sql.js';
import type { Turn, TurnRole } from '../model.js';
import { write, type UserScope } from './context.js';
import { num, optStr, placeholders, str, type Row } from './rows.js';
import { indexTerms } from './terms.js';

const ROLES: ReadonlySet<string> = new Set<TurnRole>(['user', 'assistant', 'system']);
const COLUMNS = 'id, role, speaker, text, at_ms, session_id';
/** Ids per `IN (…)` list (well under SQLite's and PostgreSQL's parameter limits). */
const ID_BATCH = 500;

/** A turn row as a Turn. */
export function turnFromRow(userId: string, r: Row): Turn {
  return { id: str(r.id), userId, role: str(r.role) as TurnRole, speaker: optStr(r.speaker), text: str(r.text), atMs: num(r.at_ms), sessionId: optStr(r.session_id) };
}

/** Throws a UsageError naming the turn unless it has an id, a role, a text and a time. */
export function checkTurn(t: Omit<Turn, 'userId'>, index: number): void {
  const where = `turn ${index + 1}${typeof t?.id === 'string' ? ` (id ${JSON.stringify(t.id)})` : ''}`;
  if (typeof t !== 'object' || t === null) throw new UsageError(`${where}: expected an object`);
  if (typeof t.id !== 'string' || t.id === '') throw new UsageError(`${where}: id must be a non-empty string`);
  if (!ROLES.has(t.role)) throw new UsageError(`${where}: role must be user, assistant or system, got ${JSON.stringify(t.role)}`);
  if (typeof t.text !== 'string') throw new UsageError(`${where}: text must be a string`);
  if (typeof t.atMs !== 'number' || !Number.isFinite(t.atMs)) throw new UsageError(`${where}: atMs must be a finite number (Unix ms)`);
  for (const field of ['speaker', 'sessionId'] as const) {
    const v = t[field];
    if (v !== undefined && v !== null && typeof v !== 'string') throw new UsageError(`${where}: ${field} must be a string or null`);
  }
}

/** `UserMemoryStore.addTurns`. */
export async function addTurns(scope: UserScope, turns: readonly Omit<Turn, 'userId'>[]): Promise<{ added: number }> {
  turns.forEach(checkTurn);
  if (turns.length === 0) return { added: 0 };
  // Analysed before the transaction, so the write lock is held only for the inserts.
  const tokens = turns.map((t) => indexTerms(scope.ctx.analyzer, t.text));
  return write(scope, async (w) => {
    let added = 0;
    for (const [i, t] of turns.entries()) {
      const values: SqlValue[] = [w.userId, t.id, w.nextSeq(), t.role, t.speaker ?? null, t.text, Math.round(t.atMs), t.sessionId ?? null];
      const { changes } = await w.tx.run(
        `INSERT INTO memory_turns (user_id, id, seq, role, speaker, text, at_ms, session_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (user_id, id) DO NOTHING`,
        values,
      );
      if (changes === 0) continue;
      added++;
      await w.index('turn', t.id, t.text, tokens[i]);
    }
    return { added };
  });
}

/** `UserMemoryStore.getTurns`. */
export async function getTurns(scope: UserScope, ids: readonly string[]): Promise<Turn[]> {
  const wanted = [...new Set(ids.filter((id) => typeof id === 'string'))];
  const found = new Map<string, Turn>();
  for (let i = 0; i < wanted.length; i += ID_BATCH) {
    const batch = wanted.slice(i, i + ID_BATCH);
    const rows = await scope.ctx.db.all<Row>(`SELECT ${COLUMNS} FROM memory_turns WHERE user_id = ? AND id IN (${placeholders(batch.length)})`, [scope.userId, ...batch]);
    for (const r of rows) found.set(str(r.id), turnFromRow(scope.userId, r));
  }
  return ids.flatMap((id) => (found.has(id) ? [found.get(id)!] : []));
}

const count = (n: number): number => (Number.isFinite(n) ? Math.max(0, Math.floor(n)) : 0);

/** `UserMemoryStore.recentTurns`. */
export async function recentTurns(scope: UserScope, limit: number): Promise<Turn[]> {
  const n = count(limit);
  if (n === 0) return [];
  const rows = await scope.ctx.db.all<Row>(`SELECT ${COLUMNS} FROM memory_turns WHERE user_id = ? ORDER BY at_ms DESC, seq DESC LIMIT ?`, [scope.userId, n]);
  return rows.reverse().map((r) => turnFromRow(scope.userId, r));
}

/** `UserMemoryStore.turnNeighbours`. */
export async function turnNeighbours(scope: UserScope, id: string, before: number, after: number): Promise<Turn[]> {
  const self = await scope.ctx.db.get<Row>(`SELECT ${COLUMNS}, seq FROM memory_turns WHERE user_id = ? AND id = ?`, [scope.userId, id]);
  return self ? around(scope, self, count(before), count(after)) : [];
}

/**
 * `UserMemoryStore.turnNeighbourhoods`: the turns asked for in one query, then their neighbours
 * in another (`neighbourRows`): the same two index walks per turn as `around`, without a
 * statement each (a rebuild asks for a dozen turns or more, on every message).
 */
export async function turnNeighbourhoods(scope: UserScope, ids: readonly string[], before: number, after: number): Promise<Map<string, Turn[]>> {
  const wanted = [...new Set(ids.filter((id) => typeof id === 'string'))];
  const out = new Map<string, Turn[]>();
  const b = count(before);
  const a = count(after);
  for (let i = 0; i < wanted.length; i += NEIGHBOURHOOD_BATCH) {
    const batch = wanted.slice(i, i + NEIGHBOURHOOD_BATCH);
    const selves = await scope.ctx.db.all<Row>(`SELECT ${COLUMNS}, seq FROM memory_turns WHERE user_id = ? AND id IN (${placeholders(batch.length)})`, [scope.userId, ...batch]);
    const near = await neighbourRows(scope, selves, b, a);
    for (const [k, self] of selves.entries()) {
      const rows = [self, ...(near.get(k) ?? [])].sort((x, y) => num(x.at_ms) - num(y.at_ms) || num(x.seq) - num(y.seq));
      out.set(str(self.id), rows.map((r) => turnFromRow(scope.userId, r)));
    }
  }
  return out;
}

/** Turns per `neighbourRows` statement: two compound terms each, under SQLite's 500. */
const NEIGHBOURHOOD_BATCH = 200;

/**
 * Up to `b` earlier and `a` later turns of each of `selves` (rows with `seq`), by index in
 * `selves`, in one statement: per turn the two walks of `around`, each a compound term tagged
 * with the turn's index. Rows come with `seq`; the caller puts them in time order.
 */
async function neighbourRows(scope: UserScope, selves: readonly Row[], b: number, a: number): Promise<Map<number, Row[]>> {
  const out = new Map<number, Row[]>();
  if (selves.length === 0 || b + a === 0) return out;
  const terms: string[] = [];
  const params: SqlValue[] = [];
  // Literal limits and tags, as in `around`: a LIMIT known when planning walks the index faster.
  for (const [k, self] of selves.entries()) {
    if (b) {
      terms.push(`SELECT * FROM (SELECT ${k} AS k, ${COLUMNS}, seq FROM memory_turns WHERE user_id = ? AND (at_ms, seq) < (?, ?) ORDER BY at_ms DESC, seq DESC LIMIT ${b})`);
      params.push(scope.userId, num(self.at_ms), num(self.seq));
    }
    if (a) {
      terms.push(`SELECT * FROM (SELECT ${k} AS k, ${COLUMNS}, seq FROM memory_turns WHERE user_id = ? AND (at_ms, seq) > (?, ?) ORDER BY at_ms, seq LIMIT ${a})`);
      params.push(scope.userId, num(self.at_ms), num(self.seq));
    }
  }
  for (const r of await scope.ctx.db.all<Row>(terms.join(' UNION ALL '), params)) {
    const k = num(r.k);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
}

/** `self` (a row with `seq`) and up to `b` earlier and `a` later turns, in time order. */
async function around(scope: UserScope, self: Row, b: number, a: number): Promise<Turn[]> {
  const { db } = scope.ctx;
  const { userId } = scope;
  const at = num(self.at_ms);
  const seq = num(self.seq);
  // The limits are literals, not parameters: SQLite walks the index several times faster with a
  // LIMIT it knows when planning (measured 3 µs against 9 µs a query), and the few distinct
  // values keep the statement cache small.
  const earlier = b
    ? await db.all<Row>(`SELECT ${COLUMNS} FROM memory_turns WHERE user_id = ? AND (at_ms, seq) < (?, ?) ORDER BY at_ms DESC, seq DESC LIMIT ${b}`, [userId, at, seq])
    : [];
  const later = a
    ? await db.all<Row>(`SELECT ${COLUMNS} FROM memory_turns WHERE user_id = ? AND (at_ms, seq) > (?, ?) ORDER BY at_ms, seq LIMIT ${a}`, [userId, at, seq])
    : [];
  return [...earlier.reverse(), self, ...later].map((r) => turnFromRow(userId, r));
}

/** `UserMemoryStore.countTurns`. */
export async function countTurns(scope: UserScope): Promise<number> {
  const row = await scope.ctx.db.get<Row>('SELECT COUNT(*) AS n FROM memory_turns WHERE user_id = ?', [scope.userId]);
  return num(row?.n);
}
