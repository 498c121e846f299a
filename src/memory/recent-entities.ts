/**
 * Recently mentioned records per user — what "它", "这个任务" and "the second one" can refer to.
 * Kept in the hot tier (active-session state) when there is one; rebuilt from the warm store
 * (open tasks, most recently updated first) on a miss, so losing the hot tier loses nothing.
 */
import type { HotCache } from '../store/hot-cache.js';
import type { RecentEntity } from './extraction.js';
import type { UserMemoryStore } from './memory-store.js';

const KIND = 'recent-entities';
const KEY = 'list';
const TTL_MS = 6 * 60 * 60_000;
const MAX = 10;

export interface RecentEntities {
  /** Most recent first. */
  get(store: UserMemoryStore): Promise<RecentEntity[]>;
  /** Moves `entities` (most recent first) to the front. */
  remember(store: UserMemoryStore, entities: readonly RecentEntity[]): Promise<void>;
}

/**
 * `keep: false` keeps no list at all (other processes write the same warm store and a private
 * list could go stale): `get` reads the open tasks, most recently updated first, every time, and
 * `remember` does nothing.
 */
export function createRecentEntities(hot: HotCache | undefined, options: { keep?: boolean } = {}): RecentEntities {
  const keep = options.keep ?? true;
  // Without a hot tier the list lives in this process only.
  const local = new Map<string, RecentEntity[]>();

  async function fromWarm(store: UserMemoryStore): Promise<RecentEntity[]> {
    const open = await store.listTasks({ status: ['todo', 'doing'], limit: 50 });
    return open
      .sort((a, b) => b.updatedAtMs - a.updatedAtMs || (a.id < b.id ? -1 : 1))
      .slice(0, MAX)
      .map((t) => ({ kind: 'task', id: t.id, text: t.title, status: t.status }));
  }

  async function get(store: UserMemoryStore): Promise<RecentEntity[]> {
    if (!keep) return fromWarm(store);
    const cached = hot ? await hot.get<RecentEntity[]>({ userId: store.userId, kind: KIND }, KEY) : local.get(store.userId);
    return cached ?? fromWarm(store);
  }

  async function remember(store: UserMemoryStore, entities: readonly RecentEntity[]): Promise<void> {
    if (!keep) return;
    const current = await get(store);
    const ids = new Set(entities.map((e) => e.id));
    const next = [...entities, ...current.filter((e) => !ids.has(e.id))].slice(0, MAX);
    if (hot) await hot.set({ userId: store.userId, kind: KIND }, KEY, next, { ttlMs: TTL_MS });
    else local.set(store.userId, next);
  }

  return { get, remember };
}
