/**
 * Idempotent messages: a message sent with an id (`IncomingMessage.id`, the HTTP API's
 * `Idempotency-Key`) is stored under that id as its user turn, so a client retrying a request
 * whose answer it never saw cannot store the message — or the task it creates — twice:
 *
 * - stored and answered: the repeat is refused with `E_CONFLICT`, whose details carry what the
 *   first one stored (turn ids and reply);
 * - stored, not answered (the LLM failed): the repeat answers it — a new rebuild and LLM call,
 *   the reply stored — without applying the message to memory again (`ProcessResult.resumed`);
 * - the same id arriving while the first is processed: refused with `E_CONFLICT` (response
 *   null), in this process or any other on the warm store: the first holds a claim of the id in
 *   the warm store until it answered or failed (./message-claim.ts), so a repeat sent to another
 *   worker is not taken for a retry of a failed first. (The store also refuses a second insert
 *   of the turn, should a claim ever be taken over from a process that was still running.);
 * - the id of another text: refused with `E_CONFLICT` (a retry repeats its message).
 */
import { CtxvmError } from '../errors.js';
import type { UserMemoryStore } from './memory-store.js';
import type { Turn } from './model.js';

/** Longest message id accepted. */
export const MAX_MESSAGE_ID_LENGTH = 256;

/** The id of the assistant turn that answers the user turn `userTurnId`. */
export function replyTurnId(userTurnId: string): string {
  return `${userTurnId}:reply`;
}

/** What a refusal of the id says is stored: the turn ids and the reply (null when there is none yet). */
function storedDetails(id: string, response: string | null): Record<string, unknown> {
  return { id, turnIds: { user: id, assistant: replyTurnId(id) }, response };
}

/** The refusal of a message whose id is already stored. */
export function repeatedMessage(userId: string, id: string, response: string | null): CtxvmError {
  return new CtxvmError('E_CONFLICT', `message ${JSON.stringify(id)} of user ${JSON.stringify(userId)} was already received; it was not processed again`, {
    hint: response === null ? 'another request with this id is being processed right now; send it again in a moment for its reply' : 'the reply to the first request is in details.response',
    details: storedDetails(id, response),
  });
}

/** What is stored of the message with this id: nothing, the message alone, or the message and its reply. */
export async function storedMessage(store: UserMemoryStore, id: string): Promise<{ message: Turn; reply: Turn | undefined } | undefined> {
  const found = await store.getTurns([id, replyTurnId(id)]);
  const message = found.find((t) => t.id === id);
  return message ? { message, reply: found.find((t) => t.id === replyTurnId(id)) } : undefined;
}

/**
 * Throws unless a message sent again with the id of `stored` may be answered now: refused when
 * the id was used for a different text, or when the stored one is answered.
 */
export function checkRetry(userId: string, text: string, stored: { message: Turn; reply: Turn | undefined }): void {
  const id = stored.message.id;
  if (stored.message.text !== text) {
    throw new CtxvmError('E_CONFLICT', `message id ${JSON.stringify(id)} of user ${JSON.stringify(userId)} was already used for a different message`, {
      hint: 'send a new message with a new id; a retry must repeat the text it was first sent with',
      details: storedDetails(id, null),
    });
  }
  if (stored.reply) throw repeatedMessage(userId, id, stored.reply.text);
}
