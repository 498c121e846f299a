/**
 * `GET /v1/sessions/economics`: the `ctxvm session economics` table for the sessions the server
 * lists. Every session is trimmed once per (file, size, mtime, ttl) in a scratch folder and its
 * row kept in memory, so a repeated request (the console's) costs only the sessions that changed;
 * concurrent requests share the rows being computed. Sessions are worked through one at a time.
 */
import { mkdir, stat } from 'node:fs/promises';
import type { CacheTtl } from '../session/cache-model.js';
import type { EconomicsGroups, SessionEconomics } from '../session/economics/economics.js';
import type { AgentKind } from '../session/context-model.js';

/** The table as the API returns it (EconomicsReport without the --model override). */
export interface EconomicsJson {
  sessions: SessionEconomics[];
  groups: EconomicsGroups;
  skipped: { file: string; reason: string }[];
  ttl: CacheTtl;
  tokenizers: Partial<Record<AgentKind, string>>;
}

/** Rows kept in memory (least recently used dropped first). */
const CACHE_ENTRIES = 2048;

type Row = { row: SessionEconomics; tokenizer: string } | { skip: string };

export interface SessionsEconomist {
  economics(files: readonly string[], options?: { ttl?: CacheTtl }): Promise<EconomicsJson>;
}

/** Creates the economics service; `scratchDir` holds each trim while it runs. */
export function createSessionsEconomist(options: { scratchDir: string }): SessionsEconomist {
  const cache = new Map<string, Promise<Row>>();

  async function rowOf(file: string, ttl: CacheTtl): Promise<Row> {
    const st = await stat(file).catch(() => undefined);
    if (!st) return { skip: 'the file is gone' };
    const key = `${file}\u0000${st.size}\u0000${st.mtimeMs}\u0000${ttl}`;
    const hit = cache.get(key);
    if (hit) {
      cache.delete(key);
      cache.set(key, hit);
      return hit;
    }
    const p = (async (): Promise<Row> => {
      const { sessionEconomics, skipReason } = await import('../session/economics/economics.js');
      await mkdir(options.scratchDir, { recursive: true });
      try {
        const { tokenizer, ...row } = await sessionEconomics(file, { ttl, scratchDir: options.scratchDir });
        return row.tokens === 0 ? { skip: 'nothing to resend (no messages)' } : { row, tokenizer };
      } catch (error) {
        const reason = skipReason(error);
        if (reason === undefined) throw error;
        return { skip: reason };
      }
    })();
    cache.set(key, p);
    p.catch(() => cache.get(key) === p && cache.delete(key));
    while (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    return p;
  }

  return {
    async economics(files, o = {}) {
      const ttl = o.ttl ?? '5m';
      const { economicsGroups } = await import('../session/economics/economics.js');
      const sessions: SessionEconomics[] = [];
      const skipped: EconomicsJson['skipped'] = [];
      const tokenizers: EconomicsJson['tokenizers'] = {};
      for (const file of files) {
        const r = await rowOf(file, ttl);
        if ('skip' in r) skipped.push({ file, reason: r.skip });
        else {
          sessions.push(r.row);
          tokenizers[r.row.agent] ??= r.tokenizer;
        }
      }
      return { sessions, groups: economicsGroups(sessions), skipped, ttl, tokenizers };
    },
  };
}
