/**
 * Optional semantic recall: turns and records embedded on write, the query embedded on read,
 * nearest neighbours fused with the BM25 hits by reciprocal rank fusion (Cormack, Clarke and
 * Büttcher 2009: each list adds 1 / (k + rank) for every item it holds). It exists for what
 * words cannot do: an English question finding a Chinese memory and the reverse.
 *
 * The endpoint is a dependency that may fail or stall. Every call here is bounded by the
 * embedder's timeout, and a failure costs only the semantic part: the write is already stored,
 * the rebuild uses BM25 alone, and `onWarning` is told what failed (never the text).
 */
import type { Embedder } from '../../text/embed.js';
import type { SearchHit, SearchKind, SearchOptions } from '../memory-store.js';
import type { VectorStore } from './vector-store.js';

/** What semantic recall needs: an embedder and where its vectors live. */
export interface SemanticRecall {
  embedder: Embedder;
  vectors: VectorStore;
  /** Told when an embedding or vector call fails (the message names no text). Default: nothing. */
  onWarning?: (message: string) => void;
}

/** A text to embed and keep. */
export interface EmbedItem {
  kind: SearchKind;
  id: string;
  text: string;
}

/** RRF's k: how much the first ranks weigh more than the later ones (60, the paper's value). */
export const RRF_K = 60;

const describe = (error: unknown) => (error as Error | undefined)?.message ?? String(error);

/** Embeds `items` and stores their vectors for `userId`; returns whether it did (a failure is a warning). */
export async function embedAndStore(s: SemanticRecall, userId: string, items: readonly EmbedItem[]): Promise<boolean> {
  const texts = items.filter((i) => i.text.trim() !== '');
  if (texts.length === 0) return true;
  try {
    const vectors = await s.embedder.embed(texts.map((i) => i.text));
    await s.vectors.put(
      userId,
      s.embedder.model,
      texts.map((it, n) => ({ kind: it.kind, id: it.id, vector: vectors[n]! })),
    );
    return true;
  } catch (error) {
    s.onWarning?.(`semantic recall: ${texts.length} text(s) of user ${JSON.stringify(userId)} not embedded (${describe(error)}); they are found by words only`);
    return false;
  }
}

/**
 * Nearest neighbours of `query` for each of `searches` (same kinds and limits as the BM25
 * searches they will be fused with), or undefined when the query could not be embedded or the
 * vectors not read.
 */
export async function semanticHits(s: SemanticRecall, userId: string, query: string, searches: readonly SearchOptions[]): Promise<SearchHit[][] | undefined> {
  try {
    const [vector] = await s.embedder.embed([query]);
    return await Promise.all(
      searches.map((o) => s.vectors.nearest(userId, vector!, { model: s.embedder.model, ...(o.kinds ? { kinds: o.kinds } : {}), ...(o.limit ? { limit: o.limit } : {}) })),
    );
  } catch (error) {
    s.onWarning?.(`semantic recall: a query of user ${JSON.stringify(userId)} searched by words only (${describe(error)})`);
    return undefined;
  }
}

/** `lists` fused by reciprocal rank: best first, at most `limit`; `score` is the fused score. */
export function fuseByRank(lists: ReadonlyArray<readonly SearchHit[]>, limit: number, k = RRF_K): SearchHit[] {
  const fused = new Map<string, SearchHit>();
  for (const list of lists) {
    for (const [rank, hit] of list.entries()) {
      const key = `${hit.kind}:${hit.id}`;
      const add = 1 / (k + rank + 1);
      const known = fused.get(key);
      if (known) known.score += add;
      else fused.set(key, { kind: hit.kind, id: hit.id, score: add });
    }
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, limit);
}
