/**
 * What the memory store's tests share: a fresh warm database per test (with a store over it, or
 * for a test that makes its own stores), turns at fixed instants, a whitespace analyzer, and the
 * option that searches every user through FTS5.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { openWarmDatabase } from '../../store/warm/open.js';
import type { SqlDatabase } from '../../store/warm/sql.js';
import type { Turn } from '../model.js';
import type { SqliteFullTextOptions } from './fulltext-sqlite.js';
import { createSqlMemoryStore, type SqlMemoryStore, type SqlMemoryStoreOptions } from './sql-memory-store.js';

/** A test's folder, its database (`ctxvm.db` in it) and, when asked for, a memory store over that. */
export interface TempMemoryStore {
  readonly dir: string;
  readonly db: SqlDatabase;
  readonly store: SqlMemoryStore;
}

/**
 * The current test's folder, database and memory store over it (made with `options`), made before
 * and closed and removed after each test.
 */
export function useTempMemoryStore(prefix: string, options: SqlMemoryStoreOptions = {}): TempMemoryStore {
  return useTemp(prefix, options);
}

/** The current test's folder and database, for a test that makes its own stores over it. */
export function useTempDatabase(prefix: string): Omit<TempMemoryStore, 'store'> {
  return useTemp(prefix, undefined);
}

function useTemp(prefix: string, storeOptions: SqlMemoryStoreOptions | undefined): TempMemoryStore {
  const state = {} as { dir: string; db: SqlDatabase; store?: SqlMemoryStore };
  beforeEach(async () => {
    state.dir = await mkdtemp(join(tmpdir(), prefix));
    state.db = await openWarmDatabase({ db: join(state.dir, 'ctxvm.db') });
    if (storeOptions) state.store = createSqlMemoryStore(state.db, storeOptions);
  });
  afterEach(async () => {
    // (closing a store writes its buffered access statistics: before the database goes)
    await state.store?.close();
    await state.db.close();
    await rm(state.dir, { recursive: true, force: true });
  });
  return state as TempMemoryStore;
}

const T0 = Date.UTC(2025, 0, 1);
/** A user turn `i` ms after a fixed instant. */
export const turn = (id: string, text: string, i: number): Omit<Turn, 'userId'> => ({ id, role: 'user', speaker: null, text, atMs: T0 + i, sessionId: null });
/** An analyzer that splits on whitespace only. */
export const words = (text: string) => text.split(/\s+/).filter(Boolean);
/** Every user searched through FTS5, none from a resident index. */
export const FTS_ONLY: SqliteFullTextOptions = { resident: { maxUserDocs: 0 } };
