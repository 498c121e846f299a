/**
 * The user's LLM, as the memory engine sees it: one async callback from a rebuilt context to a
 * reply. Adapters (OpenAI-compatible, Anthropic, offline) all produce one of these.
 */
import type { TimeZone } from '../core/time-zone.js';
import type { ChatMessage, RebuiltContext } from '../memory/context.js';
import type { Extraction } from '../memory/extraction.js';

/** What the callback receives for one turn. */
export interface LlmRequest {
  /** The rebuilt six-layer context (its `text` is the system prompt to send). */
  context: RebuiltContext;
  /** The user's message of this turn, verbatim. */
  userMessage: string;
  /** `context.text` as system message followed by the user message (OpenAI chat shape). */
  messages: ChatMessage[];
  /** What the extractor read in the message (lets an offline responder answer sensibly). */
  extraction: Extraction;
  /** The user's id. */
  userId: string;
  /** Reference instant of the turn, Unix ms. */
  nowMs: number;
  /** The user's time zone (for rendering times). */
  timeZone: TimeZone;
}

/** The user's LLM: returns the assistant's reply text. */
export type LlmCallback = (request: LlmRequest) => Promise<string>;
