/**
 * Facts and preferences of one user. A keyed one ("timeZone", "name") has one current value:
 * setting it again updates that record in place, one history entry per changed field.
 */
import { UsageError } from '../../errors.js';
import type { SqlValue } from '../../store/warm/sql.js';
import type { NewFact } from '../memory-store.js';
import type { Fact } from '../model.js';
import { write, type UserScope } from './context.js';
import { followRecordWrite } from './open-tasks.js';
import { newRecordId } from './ids.js';
import { distinctIds, idList, num, optStr, str, withSource, type Row } from './rows.js';

/** Importance of a fact when none is given, 0..1. */
export const DEFAULT_IMPORTANCE = 0.5;
const FIELDS = ['kind', 'text', 'importance'] as const;

/** A `memory_facts` row as a Fact. */
export function factFromRow(userId: string, r: Row): Fact {
  return {
    id: str(r.id),
    userId,
    kind: str(r.kind) === 'preference' ? 'preference' : 'fact',
    key: optStr(r.fact_key),
    text: str(r.text),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
    sourceTurnIds: idList(r.source_turn_ids),
    importance: num(r.importance),
  };
}

function checkFact(input: NewFact): { kind: Fact['kind']; key: string | null; text: string; importance: number } {
  if (typeof input !== 'object' || input === null) throw new UsageError('setFact: expected a fact object');
  if (input.kind !== 'fact' && input.kind !== 'preference') throw new UsageError(`setFact: kind must be fact or preference, got ${JSON.stringify(input.kind)}`);
  if (typeof input.text !== 'string' || input.text.trim() === '') throw new UsageError(`setFact: text must be a non-empty string, got ${JSON.stringify(input.text)}`);
  if (input.key !== undefined && input.key !== null && typeof input.key !== 'string') throw new UsageError(`setFact: key must be a string or null, got ${JSON.stringify(input.key)}`);
  const importance = input.importance ?? DEFAULT_IMPORTANCE;
  if (typeof importance !== 'number' || !(importance >= 0 && importance <= 1)) throw new UsageError(`setFact: importance must be 0..1, got ${JSON.stringify(input.importance)}`);
  return { kind: input.kind, key: input.key ? input.key : null, text: input.text, importance };
}

/** `UserMemoryStore.setFact`. */
export async function setFact(scope: UserScope, input: NewFact, turnId?: string | null): Promise<Fact> {
  const f = checkFact(input);
  const sources = distinctIds(input.sourceTurnIds);
  return write(scope, async (w) => {
    followRecordWrite(w, scope); // (no task changes: the open tasks the store remembers stay current)
    const row = f.key === null ? undefined : await w.tx.get<Row>('SELECT * FROM memory_facts WHERE user_id = ? AND fact_key = ?', [w.userId, f.key]);
    if (row) {
      const old = factFromRow(w.userId, row);
      const changed = FIELDS.filter((field) => old[field] !== f[field]);
      if (changed.length === 0) return old;
      let merged = old.sourceTurnIds;
      for (const id of [...sources, turnId]) merged = withSource(merged, id);
      const updated: Fact = { ...old, kind: f.kind, text: f.text, importance: f.importance, updatedAtMs: w.atMs, sourceTurnIds: merged };
      for (const field of changed) await w.history('fact', old.id, field, old[field], updated[field], turnId);
      await w.tx.run('UPDATE memory_facts SET kind = ?, text = ?, importance = ?, updated_at_ms = ?, source_turn_ids = ? WHERE user_id = ? AND id = ?', [
        f.kind, f.text, f.importance, w.atMs, JSON.stringify(merged), w.userId, old.id,
      ]);
      if (changed.includes('text')) await w.index('fact', old.id, f.text);
      return updated;
    }
    const fact: Fact = {
      id: newRecordId('fact', w.atMs),
      userId: w.userId,
      kind: f.kind,
      key: f.key,
      text: f.text,
      createdAtMs: w.atMs,
      updatedAtMs: w.atMs,
      sourceTurnIds: withSource(sources, turnId),
      importance: f.importance,
    };
    const values: SqlValue[] = [w.userId, fact.id, w.nextSeq(), fact.kind, fact.key, fact.text, fact.importance, w.atMs, w.atMs, JSON.stringify(fact.sourceTurnIds)];
    await w.tx.run(
      'INSERT INTO memory_facts (user_id, id, seq, kind, fact_key, text, importance, created_at_ms, updated_at_ms, source_turn_ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      values,
    );
    await w.history('fact', fact.id, '*', undefined, fact, turnId);
    await w.index('fact', fact.id, fact.text);
    return fact;
  });
}

/** `UserMemoryStore.listFacts`: most recently updated first. */
export async function listFacts(scope: UserScope, options: { kind?: 'fact' | 'preference' } = {}): Promise<Fact[]> {
  const params: SqlValue[] = [scope.userId];
  let sql = 'SELECT * FROM memory_facts WHERE user_id = ?';
  if (options.kind !== undefined) {
    sql += ' AND kind = ?';
    params.push(options.kind);
  }
  sql += ' ORDER BY updated_at_ms DESC, seq DESC';
  return (await scope.ctx.db.all<Row>(sql, params)).map((r) => factFromRow(scope.userId, r));
}

/** `UserMemoryStore.getFactByKey`. */
export async function getFactByKey(scope: UserScope, key: string): Promise<Fact | undefined> {
  if (typeof key !== 'string' || key === '') return undefined;
  const row = await scope.ctx.db.get<Row>('SELECT * FROM memory_facts WHERE user_id = ? AND fact_key = ?', [scope.userId, key]);
  return row ? factFromRow(scope.userId, row) : undefined;
}
