/**
 * `GET /v1/sessions/analysis`: the `ctxvm session analyze` report of a session file or of a
 * snapshot, without the per-message list. A snapshot (`snapshot:<name-or-id>`) is analysed by
 * materialising its main file to a scratch folder under `<home>/tmp`; its token numbers are then
 * cached on the snapshot in the catalog (so the tree shows them). Reports are cached in memory
 * per (file, size, mtime) — per snapshot id for snapshots, which never change — and concurrent
 * requests for the same key share one analysis.
 */
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { NotFoundError, UsageError } from '../errors.js';
import type { SessionCatalog } from '../session/dag/catalog.js';
import type { AnalyzeReport } from '../session/session.js';
import type { ObjectStore } from '../store/object-store.js';

/** The analysis as the API returns it. */
export type AnalysisJson = Omit<AnalyzeReport, 'perMessage'> & {
  /** Set when the ref named a snapshot: `file` is then the path the session had when captured. */
  snapshot?: { id: string; name: string };
};

/** Prefix of a snapshot reference. */
export const SNAPSHOT_REF_PREFIX = 'snapshot:';

/** Reports kept in memory (least recently used dropped first). */
const CACHE_ENTRIES = 32;

/** What the analyser needs. */
export interface SessionAnalyserOptions {
  catalog: SessionCatalog;
  objects: ObjectStore;
  /** Scratch folder for materialised snapshots (removed after each analysis). */
  scratchDir: string;
  /** Resolves a session id, id prefix or path to its file. */
  resolveFile(ref: string): Promise<string>;
  now?: () => number;
}

/** Analyses sessions and snapshots, with a small cache. */
export interface SessionAnalyser {
  analyze(ref: string, options?: { turns?: number }): Promise<AnalysisJson>;
}

/** Creates the analyser. */
export function createSessionAnalyser(options: SessionAnalyserOptions): SessionAnalyser {
  const cache = new Map<string, Promise<AnalysisJson>>();

  function cached(key: string, compute: () => Promise<AnalysisJson>): Promise<AnalysisJson> {
    const hit = cache.get(key);
    if (hit) {
      cache.delete(key);
      cache.set(key, hit);
      return hit;
    }
    const p = compute();
    cache.set(key, p);
    // a failure is not remembered: the next request tries again
    p.catch(() => cache.get(key) === p && cache.delete(key));
    while (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    return p;
  }

  async function run(file: string, turns: number | undefined): Promise<AnalyzeReport> {
    const { analyzeSession } = await import('../session/session.js');
    return analyzeSession(file, turns !== undefined ? { turns } : {});
  }

  async function analyzeSnapshot(ref: string, turns: number | undefined): Promise<AnalysisJson> {
    const snap = await options.catalog.findSnapshot(ref);
    if (!snap) throw new NotFoundError(`no snapshot named ${JSON.stringify(ref)} (or with that id)`, { hint: 'list them with GET /v1/sessions/tree or `ctxvm tree`' });
    return cached(`snapshot\u0000${snap.id}\u0000${turns ?? ''}`, async () => {
      const [{ loadManifest }, { materializeSnapshot }] = await Promise.all([import('../session/dag/manifest.js'), import('../session/dag/materialize.js')]);
      await mkdir(options.scratchDir, { recursive: true });
      const dir = await mkdtemp(join(options.scratchDir, `analysis-${process.pid}-`));
      try {
        const [main] = await materializeSnapshot(options.objects, await loadManifest(options.objects, snap.manifestHash), dir, { mainOnly: true, sync: false });
        const { perMessage: _perMessage, ...report } = await run(main!.path, turns);
        if (!snap.stats) {
          // the same numbers `ctxvm info` computes (the context as the agent resumes it)
          await options.catalog
            .setSnapshotStats(snap.id, { tokens: report.tokens, breakdown: report.breakdown, tokenizer: report.tokenizer, messages: report.messages, errors: report.findings.errors, model: report.model ?? null, computedAtMs: (options.now ?? Date.now)() })
            .catch(() => undefined); // a cache; the report stands without it
        }
        return { ...report, file: snap.sourcePath, snapshot: { id: snap.id, name: snap.name } };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }

  return {
    async analyze(ref, o = {}) {
      if (ref.startsWith(SNAPSHOT_REF_PREFIX)) {
        const name = ref.slice(SNAPSHOT_REF_PREFIX.length).trim();
        if (!name) throw new UsageError('query.session: "snapshot:" needs a snapshot name or id after it', { hint: 'e.g. snapshot:before-refactor' });
        return analyzeSnapshot(name, o.turns);
      }
      const file = await options.resolveFile(ref);
      const st = await stat(file).catch((error: unknown) => {
        throw new NotFoundError(`${file}: cannot read the session file`, { cause: error });
      });
      return cached(`file\u0000${file}\u0000${st.size}\u0000${st.mtimeMs}\u0000${o.turns ?? ''}`, async () => {
        const { perMessage: _perMessage, ...report } = await run(file, o.turns);
        return report;
      });
    },
  };
}
