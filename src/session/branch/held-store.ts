/**
 * A view of an object store whose references are held under one *lease holder* until the caller
 * confirms them. A branch trims into it: if the process dies before the branch is committed, the
 * objects are held only by `lease:<pid>@<host>:<random>`, which `ctxvm gc` releases once that
 * process is gone — instead of by a `trim:<uuid>` holder nothing would ever release.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ObjectStore } from '../../store/object-store.js';

/** Holder ids of leases: the writer's pid and host. */
const LEASE_HOLDER = /^lease:(\d+)@(.*):[0-9a-f]+$/;

/** A fresh lease holder id for this process. */
export function newLeaseHolder(): string {
  return `lease:${process.pid}@${hostname()}:${randomBytes(6).toString('hex')}`;
}

/** The pid and host a lease holder names, or undefined for other holders. */
export function parseLeaseHolder(holder: string): { pid: number; host: string } | undefined {
  const m = LEASE_HOLDER.exec(holder);
  return m ? { pid: Number(m[1]), host: m[2]! } : undefined;
}

/** A store view plus what it was asked to reference. */
export interface HeldStore {
  store: ObjectStore;
  lease: string;
  /** Moves every reference made through the view to the holder it was asked for, then drops the lease. */
  confirm(): Promise<void>;
  /** Drops the lease's references, and the confirmed ones (the branch was discarded). */
  release(): Promise<void>;
}

export function holdUnderLease(store: ObjectStore): HeldStore {
  const lease = newLeaseHolder();
  const wanted = new Map<string, Set<string>>();
  const all = new Set<string>();
  const note = (hashes: readonly string[], holder: string) => {
    const set = wanted.get(holder) ?? new Set<string>();
    for (const h of hashes) {
      set.add(h);
      all.add(h);
    }
    wanted.set(holder, set);
  };
  let confirmed = false;
  const view: ObjectStore = {
    ...store,
    async ref(hash, holder) {
      await store.ref(hash, lease);
      note([hash], holder);
    },
    async refMany(hashes, holder) {
      await store.refMany(hashes, lease);
      note(hashes, holder);
    },
  };
  return {
    store: view,
    lease,
    async confirm() {
      // the real holders first: the objects are never unreferenced in between
      for (const [holder, hashes] of wanted) await store.refMany([...hashes], holder);
      confirmed = true;
      await store.unrefMany([...all], lease);
      await store.flush();
    },
    async release() {
      await store.unrefMany([...all], lease);
      // confirmed, then the commit failed: the real holders go too
      if (confirmed) for (const [holder, hashes] of wanted) await store.unrefMany([...hashes], holder);
      await store.flush();
    },
  };
}
