/**
 * Raw turns of one user: appended once (an existing id is left unchanged), indexed for search,
 * read back by id, by recency, and around one turn in time order (`at_ms`, then creation order).
 */
import { UsageError } from '../../errors.js';
import type { SqlValue } from '../../store/warm/sql.js';
import type { Turn, TurnRole } from '../model.js';
import { write, type UserScope } from './context.js';
import { ID_BATCH, num, optStr, placeholders, str, type Row } from './rows.js';
import { indexTerms } from './terms.js';

const ROLES: ReadonlySet<string> = new Set<TurnRole>(['user', 'assistant', 'system']);
/** The columns `turnFromRow` reads. */
export const TURN_COLUMNS = 'id, role, speaker, text, at_ms, session_id';

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
    const rows = await scope.ctx.db.all<Row>(`SELECT ${TURN_COLUMNS} FROM memory_turns WHERE user_id = ? AND id IN (${placeholders(batch.length)})`, [scope.userId, ...batch]);
    for (const r of rows) found.set(str(r.id), turnFromRow(scope.userId, r));
  }
  return ids.flatMap((id) => (found.has(id) ? [found.get(id)!] : []));
}

/** A count asked for, as a whole number (0 for anything not a finite number). */
export const wholeCount = (n: number): number => (Number.isFinite(n) ? Math.max(0, Math.floor(n)) : 0);

/** `UserMemoryStore.recentTurns`. */
export async function recentTurns(scope: UserScope, limit: number): Promise<Turn[]> {
  const n = wholeCount(limit);
  if (n === 0) return [];
  const rows = await scope.ctx.db.all<Row>(`SELECT ${TURN_COLUMNS} FROM memory_turns WHERE user_id = ? ORDER BY at_ms DESC, seq DESC LIMIT ?`, [scope.userId, n]);
  return rows.reverse().map((r) => turnFromRow(scope.userId, r));
}

/** `UserMemoryStore.turnNeighbours`. */
export async function turnNeighbours(scope: UserScope, id: string, before: number, after: number): Promise<Turn[]> {
  const self = await scope.ctx.db.get<Row>(`SELECT ${TURN_COLUMNS}, seq FROM memory_turns WHERE user_id = ? AND id = ?`, [scope.userId, id]);
  return self ? around(scope, self, wholeCount(before), wholeCount(after)) : [];
}

/**
 * `UserMemoryStore.turnNeighbourhoods`: the turns asked for in one query, then the turns around
 * them (`turnsAround`), and each turn's `before` earlier and `after` later ones taken from those
 * in time order: the neighbourhoods `around` reads one turn at a time.
 */
export async function turnNeighbourhoods(scope: UserScope, ids: readonly string[], before: number, after: number): Promise<Map<string, Turn[]>> {
  const wanted = [...new Set(ids.filter((id) => typeof id === 'string'))];
  const out = new Map<string, Turn[]>();
  const b = wholeCount(before);
  const a = wholeCount(after);
  for (let i = 0; i < wanted.length; i += NEIGHBOURHOOD_BATCH) {
    const batch = wanted.slice(i, i + NEIGHBOURHOOD_BATCH);
    const selves = await scope.ctx.db.all<Row>(`SELECT ${TURN_COLUMNS}, seq FROM memory_turns WHERE user_id = ? AND id IN (${placeholders(batch.length)})`, [scope.userId, ...batch]);
    selves.sort(timeOrder);
    const line = await turnsAround(scope, selves, b, a);
    const at = new Map(line.map((r, k) => [str(r.id), k]));
    const turns = new Map<number, Turn>();
    const turnAt = (k: number) => {
      let t = turns.get(k);
      if (!t) turns.set(k, (t = turnFromRow(scope.userId, line[k]!)));
      return t;
    };
    for (const self of selves) {
      const k = at.get(str(self.id))!;
      const near: Turn[] = [];
      for (let j = Math.max(0, k - b); j <= Math.min(line.length - 1, k + a); j++) near.push(turnAt(j));
      out.set(str(self.id), near);
    }
  }
  return out;
}

/** Turns per `turnsAround` statement: about one compound term each (and two more), under SQLite's 500. */
const NEIGHBOURHOOD_BATCH = 200;

const timeOrder = (x: Row, y: Row) => num(x.at_ms) - num(y.at_ms) || num(x.seq) - num(y.seq);

/**
 * `selves` (rows with `seq`, in time order) and the turns around them, in time order: every turn
 * within `b` before or `a` after one of them. Read per gap between two of them rather than per
 * turn: the first `a + 1` turns of a gap in one index walk (all of a gap of `a` or fewer), and
 * the last `b` of a longer gap in a second walk; before the first, its `b` earlier; after the
 * last, its `a` later. The hits of one query often come in runs of turns (a question, its
 * answer, the next question), whose neighbourhoods overlap: a turn is read once, and a short gap
 * costs one walk instead of two.
 */
async function turnsAround(scope: UserScope, selves: readonly Row[], b: number, a: number): Promise<Row[]> {
  if (selves.length === 0 || b + a === 0) return [...selves];
  const { userId } = scope;
  const cols = `${TURN_COLUMNS}, seq`;
  const terms: string[] = [];
  const params: SqlValue[] = [];
  const point = (r: Row) => [num(r.at_ms), num(r.seq)];
  // Literal limits and tags, as in `around`: a LIMIT known when planning walks the index faster.
  const walk = (tag: number, where: string, order: string, limit: number, values: SqlValue[]) => {
    terms.push(`SELECT * FROM (SELECT ${tag} AS k, ${cols} FROM memory_turns WHERE user_id = ? AND ${where} ORDER BY ${order} LIMIT ${limit})`);
    params.push(userId, ...values);
  };
  const ASC = 'at_ms, seq';
  const DESC = 'at_ms DESC, seq DESC';
  const first = selves[0]!;
  const last = selves[selves.length - 1]!;
  // Tags: -1 before the first, -2 after the last, k the gap after selves[k].
  if (b) walk(-1, '(at_ms, seq) < (?, ?)', DESC, b, point(first));
  if (a) walk(-2, '(at_ms, seq) > (?, ?)', ASC, a, point(last));
  for (let k = 0; k + 1 < selves.length; k++) walk(k, '(at_ms, seq) > (?, ?) AND (at_ms, seq) < (?, ?)', ASC, a + 1, [...point(selves[k]!), ...point(selves[k + 1]!)]);
  const rows = await scope.ctx.db.all<Row>(terms.join(' UNION ALL '), params);
  const byTag = new Map<number, Row[]>();
  for (const r of rows) {
    const tag = num(r.k);
    const list = byTag.get(tag);
    if (list) list.push(r);
    else byTag.set(tag, [r]);
  }
  // Gaps longer than `a`: their last `b` turns (before the next self) in a second statement.
  const long = [...byTag].filter(([tag, list]) => tag >= 0 && list.length > a).map(([tag]) => tag);
  if (b && long.length > 0) {
    terms.length = 0;
    params.length = 0;
    for (const k of long) walk(k, '(at_ms, seq) > (?, ?) AND (at_ms, seq) < (?, ?)', DESC, b, [...point(selves[k]!), ...point(selves[k + 1]!)]);
    for (const r of await scope.ctx.db.all<Row>(terms.join(' UNION ALL '), params)) byTag.get(num(r.k))!.push(r);
  }
  // (a turn of a long gap can come back from both of its walks)
  const line = new Map<string, Row>();
  for (const r of selves) line.set(str(r.id), r);
  for (const list of byTag.values()) for (const r of list) line.set(str(r.id), r);
  return [...line.values()].sort(timeOrder);
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
    ? await db.all<Row>(`SELECT ${TURN_COLUMNS} FROM memory_turns WHERE user_id = ? AND (at_ms, seq) < (?, ?) ORDER BY at_ms DESC, seq DESC LIMIT ${b}`, [userId, at, seq])
    : [];
  const later = a
    ? await db.all<Row>(`SELECT ${TURN_COLUMNS} FROM memory_turns WHERE user_id = ? AND (at_ms, seq) > (?, ?) ORDER BY at_ms, seq LIMIT ${a}`, [userId, at, seq])
    : [];
  return [...earlier.reverse(), self, ...later].map((r) => turnFromRow(userId, r));
}

/** `UserMemoryStore.countTurns`. */
export async function countTurns(scope: UserScope): Promise<number> {
  const row = await scope.ctx.db.get<Row>('SELECT COUNT(*) AS n FROM memory_turns WHERE user_id = ?', [scope.userId]);
  return num(row?.n);
}
