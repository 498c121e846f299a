/**
 * `UserMemoryStore.claimMessage` / `releaseMessage` over SQL (table `memory_message_claims`,
 * migration 8): each step is one statement, atomic on its own on SQLite and on PostgreSQL, so no
 * transaction is held while the message is answered. Of two concurrent inserts of one key,
 * exactly one changes a row (`ON CONFLICT DO NOTHING`; PostgreSQL makes the second wait for the
 * first's commit); a take-over is a compare-and-set on the owner and time that were read.
 */
import type { MessageClaim } from '../message-claim.js';
import type { UserScope } from './context.js';
import { num, str, type Row } from './rows.js';

/** See `UserMemoryStore.claimMessage`. */
export async function claimMessage(scope: UserScope, id: string, owner: string, atMs: number, canTakeOver: (held: MessageClaim) => boolean): Promise<boolean> {
  const { db } = scope.ctx;
  const key = [scope.userId, id];
  // a claim released between the insert and the read is gone: insert again (bounded)
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await db.run(
      'INSERT INTO memory_message_claims (user_id, message_id, owner, claimed_at_ms) VALUES (?, ?, ?, ?) ON CONFLICT (user_id, message_id) DO NOTHING',
      [...key, owner, Math.round(atMs)],
    );
    if (inserted.changes === 1) return true;
    const row = await db.get<Row>('SELECT owner, claimed_at_ms FROM memory_message_claims WHERE user_id = ? AND message_id = ?', key);
    if (!row) continue;
    const held: MessageClaim = { owner: str(row.owner), claimedAtMs: num(row.claimed_at_ms) };
    if (held.owner === owner || !canTakeOver(held)) return false;
    const taken = await db.run('UPDATE memory_message_claims SET owner = ?, claimed_at_ms = ? WHERE user_id = ? AND message_id = ? AND owner = ? AND claimed_at_ms = ?', [
      owner,
      Math.round(atMs),
      ...key,
      held.owner,
      row.claimed_at_ms ?? null,
    ]);
    return taken.changes === 1;
  }
  return false;
}

/** See `UserMemoryStore.releaseMessage`. */
export async function releaseMessage(scope: UserScope, id: string, owner: string): Promise<void> {
  await scope.ctx.db.run('DELETE FROM memory_message_claims WHERE user_id = ? AND message_id = ? AND owner = ?', [scope.userId, id, owner]);
}
