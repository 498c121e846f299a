/** ctxvm public API: re-exports only. */
export * from './errors.js';
export * from './core/config.js';
export * from './core/jsonl.js';
export * from './core/atomic-file.js';
export * from './session/session.js';
export * from './session/context-model.js';
export * from './session/token-breakdown.js';
export { restoreSession, type RestoreOptions, type RestoreResult } from './session/trim/restore.js';
export { pageIn, type PagedPayload } from './session/trim/page-in.js';
export { resolvePolicy, DEFAULT_TRIM_POLICY, type TrimPolicy, type ToolRule } from './session/trim/policy.js';
export { createFsObjectStore, type FsObjectStoreOptions } from './store/drivers/objects-fs.js';
export type { ObjectStore, ObjectInfo, ObjectStat } from './store/object-store.js';
export { createTokenCounter, type TokenCounter } from './text/tokens.js';
export { createHotCache, type HotCache, type CacheNamespace } from './store/hot-cache.js';
export * from './core/clock.js';
export * from './core/time-zone.js';
export { createSegmenter, segmentToString, type Segmenter } from './text/segment.js';
export { resolveDates, resolveDue, type DateMention, type DueMention, type ResolveDatesOptions } from './text/dates.js';
