/**
 * Semantic recall as the edges open it: the embedder the environment configures (see
 * src/text/embed.ts) and the vector store beside the warm store — sqlite-vec in the same SQLite
 * file, or a table in the same PostgreSQL database. Undefined when CTXVM_EMBED_MODEL is unset.
 */
import { createEmbedderFromEnv } from '../../text/embed.js';
import type { SqlDatabase } from '../../store/warm/sql.js';
import type { SemanticRecall } from './semantic-recall.js';

/** Semantic recall and how to close what it opened. */
export interface OpenedSemanticRecall {
  semantic: SemanticRecall;
  close(): Promise<void>;
}

/** Options of `openSemanticRecallFromEnv`. */
export interface OpenSemanticRecallOptions {
  env: Readonly<Record<string, string | undefined>>;
  /** The warm store: a SQLite path or a `postgres://` URL (`CtxvmConfig.db`). */
  db: string;
  /** The warm store's open database, when the caller has one (PostgreSQL: its pool is reused). */
  sqlDatabase?: SqlDatabase;
  /** Where warnings go (no message text is ever in them). */
  onWarning?: (message: string) => void;
}

/** Opens semantic recall when the environment configures an embedding model; undefined otherwise. */
export async function openSemanticRecallFromEnv(options: OpenSemanticRecallOptions): Promise<OpenedSemanticRecall | undefined> {
  const embedder = createEmbedderFromEnv(options.env);
  if (!embedder) return undefined;
  const warn = options.onWarning ? { onWarning: options.onWarning } : {};
  if (/^postgres(ql)?:\/\//.test(options.db)) {
    const [{ openPostgresVectorStore }, { openWarmDatabase }] = await Promise.all([import('./vector-store-postgres.js'), import('../../store/warm/open.js')]);
    const own = options.sqlDatabase ? undefined : await openWarmDatabase({ db: options.db, migrations: [] });
    const vectors = await openPostgresVectorStore(options.sqlDatabase ?? own!);
    return { semantic: { embedder, vectors, ...warn }, close: async () => void (await own?.close()) };
  }
  const { openSqliteVectorStore } = await import('./vector-store-sqlite.js');
  const vectors = await openSqliteVectorStore({ path: options.db });
  return { semantic: { embedder, vectors, ...warn }, close: () => vectors.close() };
}
