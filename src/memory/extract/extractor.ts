/**
 * The extractor seam: the rule extractor (extract.ts) answers synchronously, an LLM extractor
 * (llm-extractor.ts) returns a promise; callers that accept either `await` the result.
 */
import type { ExtractOptions, Extraction } from '../extraction.js';

/** Reads one user message into an Extraction (DESIGN.md "Memory engine", step 1). */
export interface Extractor {
  /** "rules", "llm", or a caller's own name. */
  readonly name: string;
  /** Never throws for odd text (empty, huge, emoji); throws UsageError for bad options. */
  extract(text: string, options: ExtractOptions): Extraction | Promise<Extraction>;
}

/** An extractor that answers synchronously, in milliseconds. */
export interface SyncExtractor extends Extractor {
  extract(text: string, options: ExtractOptions): Extraction;
}

/** An extractor that answers asynchronously (it calls out, e.g. to an LLM). */
export interface AsyncExtractor extends Extractor {
  extract(text: string, options: ExtractOptions): Promise<Extraction>;
}
