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
// Sessions DAG (Step 3): discovery index, snapshots, branches from snapshots, tree, archives.
export { discoverSessions, type DiscoveredSession, type DiscoverOptions, type DiscoverResult } from './session/discovery/discover.js';
export { resolveSessionRef, latestSessionFor, encodeClaudeProjectDir } from './session/discovery/resolve.js';
export type { SessionCatalog, SnapshotRecord, BranchRecord, IndexedFile, SnapshotStats, StorageTotals } from './session/dag/catalog.js';
export { createSqlSessionCatalog } from './session/dag/sql-catalog.js';
export { createSnapshot, collectSessionFiles, type CreateSnapshotOptions, type SnapshotResult, type SnapshotSource } from './session/dag/snapshot.js';
export { materializeSnapshot, readSnapshotFile } from './session/dag/materialize.js';
export { loadManifest, type SnapshotManifest, type ManifestFile } from './session/dag/manifest.js';
export { branchFromSnapshot, type BranchFromSnapshotOptions, type SnapshotBranchResult } from './session/dag/branch-snapshot.js';
export { recordForkedBranch, generatedSnapshotName, type RecordForkedBranchOptions, type ForkedBranchRecord } from './session/dag/record-branch.js';
export { removeSnapshot, collectSessionGarbage, diskUsage, type DiskUsage } from './session/dag/maintenance.js';
export { describeNode, type SnapshotInfo, type BranchInfo } from './session/dag/info.js';
export { buildDag, renderDag, type DagGraph, type DagNode, type DagEdge } from './session/dag/tree.js';
export { exportSnapshot, type ExportResult } from './session/dag/export.js';
export { importSnapshot, type ImportResult } from './session/dag/import.js';
// Warm store: SQLite behind the SqliteDriver seam, migrations.
export { openWarmDatabase } from './store/warm/open.js';
export { runMigrations, type Migration } from './store/warm/migrations.js';
export { createBetterSqliteDriver } from './store/warm/sqlite-driver.js';
export type { SqlDatabase, SqlExecutor, SqliteDriver } from './store/warm/sql.js';
export { branchSession, prepareBranch, type BranchOptions, type BranchResult } from './session/branch/index.js';
export { installHooks, uninstallHooks, hooksStatus } from './session/../hooks/index.js';
// Memory engine (Step 4): model, store, extractor, rebuilder, manager.
export type * from './memory/model.js';
export type * from './memory/memory-store.js';
export type * from './memory/extraction.js';
export { LAYER_NAMES, type LayerName, type ContextItem, type ContextLayer, type DroppedItem, type ChatMessage, type RebuiltContext } from './memory/context.js';
export { createSqlMemoryStore, openMemoryStore, defaultAnalyzer, type SqlMemoryStore, type SqlMemoryStoreOptions, type OpenMemoryStoreOptions } from './memory/store/sql-memory-store.js';
export { createTurnArchive } from './memory/store/turn-archive.js';
export { extract, createRuleExtractor, createLlmExtractor, type Extractor, type SyncExtractor, type AsyncExtractor } from './memory/extract/index.js';
export { rebuildContext, toChatMessages } from './memory/rebuild/index.js';
export { createSearchAnalyzer } from './memory/analyzer.js';
export { createMemoryManager, DEFAULT_SYSTEM_PROMPT, PAIR_WAIT_MS, type MemoryManager, type MemoryManagerOptions, type IncomingMessage, type ProcessResult, type ProcessMetrics, type IngestTurn, type IngestResult, type MessageExtractor } from './memory/manager.js';
export * from './memory/reminders/index.js';
// LLM adapters: the SDKs load on the first call, not on import.
export type { LlmCallback, LlmRequest } from './llm/llm.js';
export { createOfflineResponder, respondOffline } from './llm/offline.js';
export { createOpenAiCompatibleLlm } from './llm/openai-compatible.js';
export { createAnthropicLlm } from './llm/anthropic.js';
export { createLlmFromEnv, type ConfiguredLlm } from './llm/from-env.js';
export { LlmError } from './llm/llm-error.js';
// Storage tiers (Step 5): read cache over the warm store, portable export/import, archive compaction.
export { createCachedMemoryStore, isCachedMemoryStore } from './memory/cached-memory-store.js';
export { readPortableMemory } from './memory/store/portable-export.js';
export { importPortableMemory } from './memory/store/portable-import.js';
export { portableLines, readPortable } from './memory/portable/codec.js';
export { compactTurnArchive } from './memory/store/archive-compaction.js';
export { createPostgresDriver } from './store/warm/postgres-driver.js';
