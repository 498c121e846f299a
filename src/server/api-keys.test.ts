import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openWarmDatabase } from '../store/warm/open.js';
import type { SqlDatabase } from '../store/warm/sql.js';
import { createApiKeyStore, type ApiKeyStore } from './api-keys.js';

let dir: string;
let db: SqlDatabase;
let keys: ApiKeyStore;
let clock = 1_700_000_000_000;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-keys-'));
  db = await openWarmDatabase({ db: join(dir, 'ctxvm.db') });
  keys = createApiKeyStore(db, { now: () => clock++ });
});
afterEach(async () => {
  await db.close();
  await rm(dir, { recursive: true, force: true });
});

describe('API keys', () => {
  it('stores only a SHA-256 of the key and verifies it', async () => {
    const k = await keys.create({ userId: 'alice', label: 'laptop' });
    expect(k.key).toMatch(/^ctxvm_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    const rows = await db.all<{ hash: string }>('SELECT * FROM api_keys');
    expect(JSON.stringify(rows)).not.toContain(k.key.slice(20));
    expect(rows[0]!.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(await keys.verify(k.key)).toEqual({ keyId: k.keyId, userId: 'alice', admin: false });
    const admin = await keys.create({ admin: true });
    expect(await keys.verify(admin.key)).toEqual({ keyId: admin.keyId, userId: null, admin: true });
  });

  it('rejects malformed, unknown, altered and revoked keys', async () => {
    const k = await keys.create({ userId: 'alice' });
    const last = k.key.at(-1) === 'A' ? 'B' : 'A';
    for (const bad of ['', 'ctxvm_', k.key + 'x', k.key.slice(0, -1) + last, k.key.replace(k.keyId, '0'.repeat(12))]) expect(await keys.verify(bad)).toBeUndefined();
    await keys.revoke(k.keyId);
    expect(await keys.verify(k.key)).toBeUndefined();
    const [listed] = await keys.list();
    expect(listed).toMatchObject({ keyId: k.keyId, userId: 'alice', revokedAtMs: expect.any(Number) });
    await expect(keys.revoke('ffffffffffff')).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
    await expect(keys.create({ userId: ' ' })).rejects.toMatchObject({ code: 'E_USAGE' });
  });

  it('remembers verified keys for verifiedTtlMs, forgets them on revoke, and never caches a failure', async () => {
    let t = 1_700_000_000_000;
    const cached = createApiKeyStore(db, { now: () => t, verifiedTtlMs: 5_000, verifiedMax: 2 });
    const k = await cached.create({ userId: 'alice' });
    expect(await cached.verify(k.key)).toEqual({ keyId: k.keyId, userId: 'alice', admin: false });
    // revoked behind the cache's back (another process): still trusted until the TTL runs out
    await db.run('UPDATE api_keys SET revoked_at_ms = 1 WHERE id = ?', [k.keyId]);
    expect(await cached.verify(k.key)).toMatchObject({ keyId: k.keyId });
    t += 5_001;
    expect(await cached.verify(k.key)).toBeUndefined();
    // revoked through the store: at once
    const k2 = await cached.create({ userId: 'bob' });
    expect(await cached.verify(k2.key)).toMatchObject({ userId: 'bob' });
    await cached.revoke(k2.keyId);
    expect(await cached.verify(k2.key)).toBeUndefined();
    // an altered key is checked against the database every time, whatever is cached
    const k3 = await cached.create({ userId: 'carol' });
    expect(await cached.verify(k3.key)).toMatchObject({ userId: 'carol' });
    const last = k3.key.at(-1) === 'A' ? 'B' : 'A';
    expect(await cached.verify(k3.key.slice(0, -1) + last)).toBeUndefined();
    // the returned principal is a copy: changing it changes nothing cached
    const p = (await cached.verify(k3.key))!;
    p.admin = true;
    expect(await cached.verify(k3.key)).toMatchObject({ admin: false });
  });
});
