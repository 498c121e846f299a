/**
 * API keys of the HTTP server. A key is `ctxvm_<id>_<secret>`: `id` (12 hex digits) finds the row,
 * `secret` is 32 random bytes (base64url). Only the SHA-256 of the whole key is stored, and it is
 * compared in constant time, so neither the database nor response timing gives a key away.
 * A key belongs to one user, or is an admin key (every user, plus the machine-wide session
 * endpoints).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { NotFoundError, UsageError } from '../errors.js';
import type { SqlDatabase } from '../store/warm/sql.js';

/** What a verified key may do. */
export interface ApiPrincipal {
  /** Key id (safe to log; never the key). */
  keyId: string;
  /** The only user this key may touch, or null for an admin key. */
  userId: string | null;
  admin: boolean;
}

/** One stored key, as `ctxvm keys list` shows it (no secret, no hash). */
export interface ApiKeyRecord extends ApiPrincipal {
  label: string | null;
  /** Unix ms. */
  createdAtMs: number;
  /** Unix ms, or null while the key is valid. */
  revokedAtMs: number | null;
}

/** A newly created key: `key` is shown once and never stored. */
export interface CreatedApiKey extends ApiKeyRecord {
  key: string;
}

/** Who a new key is for: one user, or admin. */
export type NewApiKey = { userId: string; admin?: false; label?: string } | { admin: true; userId?: undefined; label?: string };

/** API keys in the warm store. */
export interface ApiKeyStore {
  create(spec: NewApiKey): Promise<CreatedApiKey>;
  /** Every key, newest first (revoked ones included). */
  list(): Promise<ApiKeyRecord[]>;
  /** Revokes a key by id; NotFoundError when there is none. Revoking twice is not an error. */
  revoke(id: string): Promise<ApiKeyRecord>;
  /** The principal of a presented key, or undefined when it is malformed, unknown or revoked. */
  verify(presented: string): Promise<ApiPrincipal | undefined>;
}

/** Options of `createApiKeyStore`. */
export interface ApiKeyStoreOptions {
  /** Clock, Unix ms (default `Date.now`). */
  now?: () => number;
  /**
   * How long a verified key is trusted without asking the database again, ms (default 0: always
   * ask). Revoking through this store takes effect at once; a key revoked by another process
   * (`ctxvm keys revoke` next to a running server) keeps working for at most this long.
   */
  verifiedTtlMs?: number;
  /** Most verified keys remembered at once (default 10 000; the oldest go first). */
  verifiedMax?: number;
}

const KEY_PATTERN = /^ctxvm_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;
// A digest to compare against when the id is unknown, so that path costs the same as a mismatch.
const DUMMY_DIGEST = Buffer.alloc(32);

function digest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

interface KeyRow {
  id: string;
  hash: string;
  user_id: string | null;
  admin: number | bigint;
  label: string | null;
  created_at_ms: number | bigint;
  revoked_at_ms: number | bigint | null;
}

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    keyId: row.id,
    userId: row.user_id,
    admin: Number(row.admin) === 1,
    label: row.label,
    createdAtMs: Number(row.created_at_ms),
    revokedAtMs: row.revoked_at_ms === null ? null : Number(row.revoked_at_ms),
  };
}

/** The API key store over an open, migrated warm database (the caller closes it). */
export function createApiKeyStore(db: SqlDatabase, options: ApiKeyStoreOptions = {}): ApiKeyStore {
  const now = options.now ?? Date.now;
  const COLUMNS = 'id, hash, user_id, admin, label, created_at_ms, revoked_at_ms';
  const ttlMs = Math.max(0, options.verifiedTtlMs ?? 0);
  const maxVerified = Math.max(1, options.verifiedMax ?? 10_000);
  // digest (hex) of a verified key → its principal; the key itself is never kept
  const verified = new Map<string, { principal: ApiPrincipal; untilMs: number }>();
  const forget = (keyId: string) => {
    for (const [d, v] of verified) if (v.principal.keyId === keyId) verified.delete(d);
  };

  return {
    async create(spec) {
      const admin = spec.admin === true;
      const userId = admin ? null : spec.userId;
      if (!admin && (typeof userId !== 'string' || userId.trim() === '')) throw new UsageError('an API key needs a user id (or admin)');
      const id = randomBytes(6).toString('hex');
      const key = `ctxvm_${id}_${randomBytes(32).toString('base64url')}`;
      const createdAtMs = now();
      const label = spec.label ?? null;
      await db.run(`INSERT INTO api_keys (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, NULL)`, [id, digest(key).toString('hex'), userId, admin ? 1 : 0, label, createdAtMs]);
      return { key, keyId: id, userId, admin, label, createdAtMs, revokedAtMs: null };
    },

    async list() {
      const rows = await db.all<KeyRow>(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at_ms DESC, id`);
      return rows.map(toRecord);
    },

    async revoke(id) {
      const row = await db.get<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`, [id]);
      if (!row) throw new NotFoundError(`no API key with id ${JSON.stringify(id)}`, { hint: 'run `ctxvm keys list` to see the key ids' });
      forget(id);
      if (row.revoked_at_ms === null) {
        const at = now();
        await db.run('UPDATE api_keys SET revoked_at_ms = ? WHERE id = ? AND revoked_at_ms IS NULL', [at, id]);
        return toRecord({ ...row, revoked_at_ms: at });
      }
      return toRecord(row);
    },

    async verify(presented) {
      const m = KEY_PATTERN.exec(presented);
      const presentedDigest = digest(presented);
      const cacheKey = ttlMs > 0 && m ? presentedDigest.toString('hex') : undefined;
      if (cacheKey !== undefined) {
        const hit = verified.get(cacheKey);
        if (hit && hit.untilMs > now()) return { ...hit.principal };
        if (hit) verified.delete(cacheKey);
      }
      const row = m ? await db.get<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`, [m[1]!]) : undefined;
      const stored = row ? Buffer.from(row.hash, 'hex') : DUMMY_DIGEST;
      const same = stored.length === 32 && timingSafeEqual(presentedDigest, stored);
      if (!row || !same || row.revoked_at_ms !== null) return undefined;
      const principal: ApiPrincipal = { keyId: row.id, userId: row.user_id, admin: Number(row.admin) === 1 };
      if (cacheKey !== undefined) {
        if (verified.size >= maxVerified) verified.delete(verified.keys().next().value!);
        verified.set(cacheKey, { principal, untilMs: now() + ttlMs });
      }
      return { ...principal };
    },
  };
}
