/** The rebuilder: six-layer prompt contexts from memory within a token budget. */
export { rebuildContext, REBUILD_CACHE_KIND } from './rebuild.js';
export { toChatMessages, type AnthropicChat, type AnthropicTextBlock, type ChatShapes } from './chat.js';
export {
  DEFAULT_BUDGET_TOKENS,
  DEFAULT_HISTORY_TUNING,
  DEFAULT_LAYER_SHARES,
  DEFAULT_WEIGHTS,
  type HistoryTuning,
  type RebuildOptions,
  type RetrievalWeights,
} from './options.js';
export { packContext, type PackCandidate, type PackResult } from './pack.js';
export { keySentence } from './compress.js';
