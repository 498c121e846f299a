/**
 * Reads one user's whole memory as portable records (../portable/format.ts), straight from the
 * warm tables so ids, times and history survive exactly: every kind in creation order (`seq`),
 * history oldest first. One transaction, so the export is a consistent snapshot even while the
 * user keeps writing.
 */
import type { SqlDatabase, SqlExecutor } from '../../store/warm/sql.js';
import type { PortableRecord } from '../portable/format.js';
import { assertUserId } from './context.js';
import { decisionFromRow } from './decisions.js';
import { factFromRow } from './facts.js';
import { historyFromRow } from './history.js';
import { projectFromRow } from './projects.js';
import type { Row } from './rows.js';
import { taskFromRow } from './tasks.js';
import { turnFromRow } from './turns.js';

const all = (tx: SqlExecutor, table: string, userId: string) => tx.all<Row>(`SELECT * FROM ${table} WHERE user_id = ? ORDER BY seq`, [userId]);

/** Every record of `userId` in export order (turns, projects, tasks, decisions, facts, history). */
export async function readPortableMemory(db: SqlDatabase, userId: string): Promise<PortableRecord[]> {
  assertUserId(userId);
  return db.transaction(async (tx) => {
    const out: PortableRecord[] = [];
    // The store's own row readers, minus the user (the export names it once, in its header).
    const own = <T extends { userId: string }>(record: T) => {
      const { userId: _user, ...rest } = record;
      return rest;
    };
    for (const r of await all(tx, 'memory_turns', userId)) out.push({ type: 'turn', ...own(turnFromRow(userId, r)) });
    for (const r of await all(tx, 'memory_projects', userId)) out.push({ type: 'project', ...own(projectFromRow(userId, r)) });
    for (const r of await all(tx, 'memory_tasks', userId)) out.push({ type: 'task', ...own(taskFromRow(userId, r)) });
    for (const r of await all(tx, 'memory_decisions', userId)) out.push({ type: 'decision', ...own(decisionFromRow(userId, r)) });
    for (const r of await all(tx, 'memory_facts', userId)) out.push({ type: 'fact', ...own(factFromRow(userId, r)) });
    for (const r of await all(tx, 'memory_history', userId)) {
      const { seq: _seq, ...entry } = own(historyFromRow(userId, r));
      out.push({ type: 'history', ...entry });
    }
    return out;
  });
}
