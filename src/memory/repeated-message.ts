/**
 * Idempotent messages: a message sent with an id (`IncomingMessage.id`, the HTTP API's
 * `Idempotency-Key`) is stored under that id as its user turn, so a client retrying a request
 * whose answer it never saw cannot store the message — or the task it creates — twice. A repeat
 * is refused with `E_CONFLICT`, whose details carry what the first one stored: the turn ids and
 * the reply (null while the first is still being answered).
 */
import { CtxvmError } from '../errors.js';
import type { UserMemoryStore } from './memory-store.js';

/** Longest message id accepted. */
export const MAX_MESSAGE_ID_LENGTH = 256;

/** The id of the assistant turn that answers the user turn `userTurnId`. */
export function replyTurnId(userTurnId: string): string {
  return `${userTurnId}:reply`;
}

/** The refusal of a message whose id is already stored. */
export function repeatedMessage(userId: string, id: string, response: string | null): CtxvmError {
  return new CtxvmError('E_CONFLICT', `message ${JSON.stringify(id)} of user ${JSON.stringify(userId)} was already received; it was not processed again`, {
    hint: response === null ? 'the first request with this id is still being answered (or failed before its reply); read the reply from the history later' : 'the reply to the first request is in details.response',
    details: { id, turnIds: { user: id, assistant: replyTurnId(id) }, response },
  });
}

/** Throws `repeatedMessage` when a turn with this id is stored for the user. */
export async function refuseRepeatedMessage(store: UserMemoryStore, id: string): Promise<void> {
  const found = await store.getTurns([id, replyTurnId(id)]);
  if (!found.some((t) => t.id === id)) return;
  const reply = found.find((t) => t.id === replyTurnId(id));
  throw repeatedMessage(store.userId, id, reply ? reply.text : null);
}
