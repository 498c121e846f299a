/**
 * Writes portable records (../portable/format.ts) into one user's warm memory, keeping ids,
 * times and history exactly, in ONE transaction: an import lands whole or not at all. The user
 * must have no memory yet (importing over existing records would have to merge two histories),
 * so importing the same file twice is refused rather than doubled.
 *
 * Records are checked before anything is written: duplicate ids, a second fact with the same
 * key, or a second project with the same name are reported with the line they are on. Search
 * rows are built with the store's analyzer and the same texts the store indexes (tasks.ts,
 * projects.ts, decisions.ts, facts.ts, turns.ts), so an imported memory searches like the original.
 */
import { CtxvmError, ParseError } from '../../errors.js';
import type { SqlDatabase } from '../../store/warm/sql.js';
import type { LinePosition, PortableRecord, PortableRecordType } from '../portable/format.js';
import { assertUserId, userKeyOf, write, type Analyzer, type StoreContext, type UserScope } from './context.js';
import { fullTextDialectFor } from './fulltext.js';
import { projectNameKey } from './projects.js';
import { num, type Row } from './rows.js';
import { defaultAnalyzer } from './sql-memory-store.js';
import { indexTerms } from './terms.js';

/** A record with the line it came from. */
export interface PositionedRecord {
  record: PortableRecord;
  at: LinePosition;
}

/** Options of `importPortableMemory`. */
export interface ImportPortableOptions {
  /** The migrated warm database. */
  db: SqlDatabase;
  /** Text → search tokens; must be the analyzer the store uses (default: the jieba segmenter). */
  analyzer?: Analyzer;
  /** Clock, Unix ms (default `Date.now`). */
  now?: () => number;
}

/** Records imported, by type. */
export type ImportCounts = Record<PortableRecordType, number>;

/** The text the store indexes for a record (none for history). */
function searchText(r: PortableRecord): string | undefined {
  switch (r.type) {
    case 'turn':
      return r.text;
    case 'project':
      return r.name;
    case 'task':
      return r.title;
    case 'decision':
      return r.rationale ? `${r.text}\n${r.rationale}` : r.text;
    case 'fact':
      return r.text;
    default:
      return undefined;
  }
}

/** Throws a ParseError at the line of the first record that clashes with an earlier one. */
function checkUnique(records: readonly PositionedRecord[]): void {
  const seen = new Map<string, number>();
  const claim = (name: string, what: string, at: LinePosition) => {
    const first = seen.get(name);
    if (first !== undefined) throw new ParseError(at, `${what} already appears on line ${first}`, { hint: 'each record may appear once; was the file concatenated?' });
    seen.set(name, at.line);
  };
  for (const { record: r, at } of records) {
    if (r.type === 'history') continue;
    claim(`${r.type}:id:${r.id}`, `${r.type} id ${JSON.stringify(r.id)}`, at);
    if (r.type === 'fact' && r.key !== null) claim(`fact:key:${r.key}`, `a fact with key ${JSON.stringify(r.key)}`, at);
    if (r.type === 'project') claim(`project:name:${projectNameKey(r.name)}`, `a project named ${JSON.stringify(r.name)}`, at);
  }
}

/** Imports `records` as the memory of `userId`, which must have none yet. */
export async function importPortableMemory(userId: string, records: readonly PositionedRecord[], options: ImportPortableOptions): Promise<ImportCounts> {
  assertUserId(userId);
  checkUnique(records);
  const { db } = options;
  const analyzer = options.analyzer ?? defaultAnalyzer();
  const fullText = fullTextDialectFor(db.dialect);
  let ready: Promise<void> | undefined;
  const ctx: StoreContext = { db, analyzer, now: options.now ?? Date.now, fullText, ready: () => (ready ??= fullText.ensure(db)) };
  const scope: UserScope = { ctx, userId, userKey: userKeyOf(userId) };
  // Analysed before the transaction, so the write lock is held only for the inserts.
  const tokens = records.map(({ record }) => {
    const t = searchText(record);
    return t === undefined ? undefined : indexTerms(analyzer, t);
  });
  const counts: ImportCounts = { turn: 0, project: 0, task: 0, decision: 0, fact: 0, history: 0 };

  await write(scope, async (w) => {
    const existing = await w.tx.get<Row>('SELECT version FROM memory_versions WHERE user_id = ?', [userId]);
    if (num(existing?.version) > 0) {
      throw new CtxvmError('E_EXISTS', `user ${JSON.stringify(userId)} already has memory (version ${num(existing?.version)}); nothing was imported`, {
        hint: 'import into a new user id with --user, or into an empty store',
      });
    }
    w.changed();
    for (const [i, { record: r }] of records.entries()) {
      counts[r.type]++;
      const src = 'sourceTurnIds' in r ? JSON.stringify(r.sourceTurnIds) : null;
      switch (r.type) {
        case 'turn':
          await w.tx.run('INSERT INTO memory_turns (user_id, id, seq, role, speaker, text, at_ms, session_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
            userId, r.id, w.nextSeq(), r.role, r.speaker, r.text, r.atMs, r.sessionId,
          ]);
          break;
        case 'project':
          await w.tx.run('INSERT INTO memory_projects (user_id, id, seq, name, name_key, created_at_ms, updated_at_ms, source_turn_ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
            userId, r.id, w.nextSeq(), r.name, projectNameKey(r.name), r.createdAtMs, r.updatedAtMs, src,
          ]);
          break;
        case 'task':
          await w.tx.run(
            `INSERT INTO memory_tasks (user_id, id, seq, title, status, priority, due_at_ms, due_phrase, project_id, created_at_ms, updated_at_ms, source_turn_ids, confidence)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
            [userId, r.id, w.nextSeq(), r.title, r.status, r.priority, r.dueAtMs, r.duePhrase, r.projectId, r.createdAtMs, r.updatedAtMs, src, r.confidence],
          );
          break;
        case 'decision':
          await w.tx.run('INSERT INTO memory_decisions (user_id, id, seq, text, rationale, task_id, project_id, created_at_ms, source_turn_ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
            userId, r.id, w.nextSeq(), r.text, r.rationale, r.taskId, r.projectId, r.createdAtMs, src,
          ]);
          break;
        case 'fact':
          await w.tx.run(
            'INSERT INTO memory_facts (user_id, id, seq, kind, fact_key, text, importance, created_at_ms, updated_at_ms, source_turn_ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
            [userId, r.id, w.nextSeq(), r.kind, r.key, r.text, r.importance, r.createdAtMs, r.updatedAtMs, src],
          );
          break;
        case 'history':
          await w.tx.run(
            `INSERT INTO memory_history (seq, user_id, kind, record_id, field, old_value, new_value, turn_id, at_ms)
             VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM memory_history), ?, ?, ?, ?, ?, ?, ?, ?)`,
            [userId, r.kind, r.recordId, r.field, r.oldValue, r.newValue, r.turnId, r.atMs],
          );
          break;
      }
      if (r.type !== 'history') await w.index(r.type, r.id, '', tokens[i]);
    }
  });
  return counts;
}
