/**
 * What the HTTP app and the MCP server run on: the memory engine, the session operations, the
 * API keys, and optionally the user's LLM and the hot cache (for its hit rate). Passed in, so
 * tests and embedders wire their own; `openServerServices` (open-services.ts) wires them from
 * the configuration.
 */
import type { LlmCallback } from '../llm/llm.js';
import type { MemoryManager } from '../memory/manager.js';
import type { HotCache } from '../store/hot-cache.js';
import type { ApiKeyStore } from './api-keys.js';
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
}
