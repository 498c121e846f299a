/** ctxvm public API: re-exports only. */
export * from './errors.js';
export * from './core/config.js';
export * from './core/jsonl.js';
export * from './core/atomic-file.js';
