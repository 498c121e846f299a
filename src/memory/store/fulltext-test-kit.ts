/**
 * What the SQLite full-text tests share: a fresh warm database per test, turns at fixed instants,
 * a whitespace analyzer, and the option that searches every user through FTS5.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { openWarmDatabase } from '../../store/warm/open.js';
import type { SqlDatabase } from '../../store/warm/sql.js';
import type { Turn } from '../model.js';
import type { SqliteFullTextOptions } from './fulltext-sqlite.js';

/** The current test's folder and database (`ctxvm.db` in it), made before and removed after each test. */
export function useTempDatabase(prefix: string): { readonly dir: string; readonly db: SqlDatabase } {
  const state = {} as { dir: string; db: SqlDatabase };
  beforeEach(async () => {
    state.dir = await mkdtemp(join(tmpdir(), prefix));
    state.db = await openWarmDatabase({ db: join(state.dir, 'ctxvm.db') });
  });
  afterEach(async () => {
    await state.db.close();
    await rm(state.dir, { recursive: true, force: true });
  });
  return state;
}

const T0 = Date.UTC(2025, 0, 1);
/** A user turn `i` ms after a fixed instant. */
export const turn = (id: string, text: string, i: number): Omit<Turn, 'userId'> => ({ id, role: 'user', speaker: null, text, atMs: T0 + i, sessionId: null });
/** An analyzer that splits on whitespace only. */
export const words = (text: string) => text.split(/\s+/).filter(Boolean);
/** Every user searched through FTS5, none from a resident index. */
export const FTS_ONLY: SqliteFullTextOptions = { resident: { maxUserDocs: 0 } };
