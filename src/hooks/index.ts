/** Claude Code hooks: settings.json editing and the SessionEnd/PreCompact auto-trim. Re-exports only. */
export {
  HOOK_EVENTS,
  editSettingsFile,
  hookCommand,
  hooksStatus,
  installHooks,
  isCtxvmHookCommand,
  parseSettings,
  readSettingsFile,
  uninstallHooks,
  type EditSettingsResult,
  type HookEvent,
  type HooksEdit,
  type HooksStatus,
  type Settings,
  type SettingsFile,
} from './settings.js';
export { isHookEvent, parseHookPayload, type HookPayload } from './payload.js';
export { runHook, type HookBranched, type HookRunOptions } from './run.js';
export { HOOK_SNAPSHOT_TAGS, recordHookBranch, type HookDagServices } from './dag-record.js';
export { appendHookLog, hookLogPath, readHookLog, type HookDagEntry, type HookLogEntry } from './log.js';
export { tryLock, type LockHandle } from './lock.js';
