/**
 * What the HTTP app and the MCP server run on: the memory engine, the session operations, the
 * API keys, and optionally the user's LLM and the hot cache (for its hit rate). Passed in, so
 * tests and embedders wire their own; `openServerServices` (open-services.ts) wires them from
 * the configuration.
 */
import type { LlmCallback } from '../llm/llm.js';
import type { MemoryManager } from '../memory/manager.js';
import type { ListUsersOptions, UserSummary } from '../memory/memory-store.js';
import type { HotCache } from '../store/hot-cache.js';
import type { ApiKeyStore } from './api-keys.js';
import type { ReminderHub } from '../memory/reminders/hub.js';
import type { SessionOps } from './session-ops.js';

/** The engines and stores a server uses. */
export interface ServerServices {
  manager: MemoryManager;
  sessions: SessionOps;
  keys: ApiKeyStore;
  /** Answers messages (default: the offline responder). */
  llm?: LlmCallback;
  /** The manager's hot cache, for `/metrics` (hit rate). */
  hot?: HotCache;
  /** The hub the reminder scheduler delivers to; with it the app serves the reminder streams (SSE). */
  reminders?: ReminderHub;
  /** Users with memory, for the admin listing `GET /v1/users` (the warm store's `listUsers`); without it the route answers 400 E_UNSUPPORTED. */
  listUsers?(options?: ListUsersOptions): Promise<UserSummary[]>;
}
