/**
 * A rebuilt prompt context (DESIGN.md step 4 "rebuild"): six layers from most stable to most
 * volatile, each with its items, their token cost and where they came from.
 */

/** Layer names, in render order (stable → volatile). */
export const LAYER_NAMES = ['system', 'profile', 'project', 'tasks', 'history', 'memories'] as const;
export type LayerName = (typeof LAYER_NAMES)[number];

/** One rendered item of a layer. */
export interface ContextItem {
  /** "task", "project", "decision", "fact", "preference", "turn", "system". */
  kind: string;
  /** Record id (turn id for history items). */
  id: string;
  /** The rendered line(s), exactly as they appear in `text`. */
  text: string;
  /** Ids of the ingested turns this item came from (for recall measurement). */
  sources: string[];
  /** Whether the packer shortened it to fit (task → title + status + due; turn → key sentence). */
  compressed?: boolean;
}

/** One layer of the context. */
export interface ContextLayer {
  name: LayerName;
  /** Tokens of this layer's rendered text. */
  tokens: number;
  /** The layer's quota, tokens. */
  budgetTokens: number;
  items: ContextItem[];
}

/** An item the packer left out, and why. */
export interface DroppedItem {
  layer: LayerName;
  kind: string;
  id: string;
  /** "budget" (no room even compressed), "duplicate", "stale", … */
  reason: string;
  /** Tokens its full line would have taken (its text and newline; the packer's own count). */
  tokens: number;
}

/** A chat message in provider shape. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** The rebuilt context of one turn. */
export interface RebuiltContext {
  /** The whole rendered context, within the budget. */
  text: string;
  /** Tokens of `text` (real tokenizer). */
  tokens: number;
  budgetTokens: number;
  layers: ContextLayer[];
  dropped: DroppedItem[];
  /**
   * Length in UTF-16 code units of the prefix of `text` made of the stable layers (system,
   * profile, project): byte-identical between turns while memory has not changed.
   */
  stablePrefixChars: number;
  /** Memory version the context was built from. */
  memoryVersion: number;
  /** Whether it came from the rebuild cache. */
  cached: boolean;
  /**
   * The clock block right after the stable prefix: its text (in `text`), the tokens it adds, the
   * instant it states (ISO-8601 UTC) and the zone every date and time of `text` is in. Absent
   * when the rebuild was asked for none, or the budget is smaller than the block.
   */
  clock?: { text: string; tokens: number; at: string; timeZone: string };
}
