/**
 * The packer: fits ranked candidates into per-layer token quotas with the real tokenizer.
 *
 * 1. Stable layers (system, profile, project) fill in order, each within its quota plus what the
 *    layers before it left unused; nothing about the query reaches them, so their text is a
 *    stable prefix. (The system prompt may use any of the budget: it is the caller's text.)
 * 2. Protected candidates (open tasks the query is about) go next, compressed if they must.
 * 3. Volatile layers (tasks, history, memories) fill in order, each within its share of what is
 *    left plus what earlier layers left unused; then any tokens still free go to whichever
 *    volatile layers have candidates waiting, in order.
 * 4. Compressed items are upgraded to their full form while tokens remain.
 *
 * An item that does not fit in full is tried compressed before it is dropped; low-ranked items
 * can ask to start compressed (`preferCompact`), so more of them fit. Costs are counted per line
 * and the rendered text is counted again at the end; should BPE merges across lines make it
 * larger than the budget, the lowest-priority volatile items go until it fits.
 */
import { createTextMemo, type TextMemo } from '../../text/text-memo.js';
import type { TokenCounter } from '../../text/tokens.js';
import { LAYER_NAMES, type ContextItem, type ContextLayer, type DroppedItem, type LayerName } from '../context.js';
import { blockText, joinBlocks, LAYER_TITLES, layerBlockLines, renderOrder, STABLE_LAYERS, type PlacedItem } from './render.js';

/** One candidate for the context. */
export interface PackCandidate {
  layer: LayerName;
  kind: string;
  id: string;
  /** Turn ids the item came from (read only: the context gets a copy of them). */
  sources: readonly string[];
  /** The item's rendered line(s) in full. */
  full: string;
  /** A shorter rendering (task → title + status + due; turn → key sentence), if there is one. */
  compact?: string;
  /** Higher packs first. */
  priority: number;
  /** Packed before any other volatile item and never dropped while its compact form fits the budget. */
  protected?: boolean;
  /** Start with the compact form; upgraded to full if tokens remain at the end. */
  preferCompact?: boolean;
  /** Render order within the layer (string comparison). */
  order: string;
  /** Group key and header line (history: one session). */
  group?: string;
  groupHeader?: string;
}

/** Shares per layer (normalised, summing to 1). */
export type LayerShares = Readonly<Record<LayerName, number>>;

/** What the packer produced. */
export interface PackResult {
  text: string;
  tokens: number;
  stablePrefixChars: number;
  layers: ContextLayer[];
  dropped: DroppedItem[];
}

type Form = 'full' | 'compact';

interface LayerState {
  name: LayerName;
  candidates: PackCandidate[];
  placed: Map<PackCandidate, Form>;
  openGroups: Set<string>;
  used: number;
  quota: number;
}

const VOLATILE: readonly LayerName[] = LAYER_NAMES.filter((name) => !STABLE_LAYERS.has(name));

/** Packs `candidates` into `budgetTokens`; see the module comment for the order of decisions. */
export function packContext(candidates: readonly PackCandidate[], budgetTokens: number, shares: LayerShares, tokens: TokenCounter): PackResult {
  // The counter remembers short texts (text-memo.ts); `lineCost` keeps each candidate's costs.
  const cost = (text: string) => tokens.count(text);
  const states = new Map<LayerName, LayerState>();
  for (const name of LAYER_NAMES) {
    const mine = candidates.filter((c) => c.layer === name).sort(byPriority);
    states.set(name, { name, candidates: mine, placed: new Map(), openGroups: new Set(), used: 0, quota: 0 });
  }
  const st = (name: LayerName) => states.get(name)!;
  let remaining = budgetTokens;

  // Line costs per candidate and form, so a candidate tried again (leftovers, upgrades) is not recounted.
  const lineCosts = new Map<PackCandidate, { full?: number; compact?: number }>();
  const lines = lineMemoOf(tokens);
  const lineCost = (c: PackCandidate, form: Form): number => {
    let known = lineCosts.get(c);
    if (!known) lineCosts.set(c, (known = {}));
    const f = form === 'compact' && c.compact !== undefined ? 'compact' : 'full';
    return (known[f] ??= textLineCost(f === 'compact' ? c.compact! : c.full));
  };
  /** Tokens of `text` as a line (with its newline), remembered by `text` itself. */
  const textLineCost = (text: string): number => {
    let n = lines.get(text);
    if (n === undefined) {
      n = cost(`${text}\n`);
      lines.set(text, n);
    }
    return n;
  };
  const addCost = (s: LayerState, c: PackCandidate, form: Form): number => {
    let n = lineCost(c, form);
    if (s.placed.size === 0) n += layerOverhead(s.name, cost);
    if (c.group !== undefined && !s.openGroups.has(c.group) && c.groupHeader) n += cost(`${c.groupHeader}\n`);
    return n;
  };
  const place = (s: LayerState, c: PackCandidate, form: Form, n: number) => {
    s.placed.set(c, form);
    if (c.group !== undefined) s.openGroups.add(c.group);
    s.used += n;
    remaining -= n;
  };
  /** Tries `c` in its preferred form, then compact; returns whether it went in. */
  const tryPlace = (s: LayerState, c: PackCandidate, avail: number): boolean => {
    const forms: Form[] = c.compact === undefined ? ['full'] : c.preferCompact ? ['compact'] : ['full', 'compact'];
    for (const form of forms) {
      const n = addCost(s, c, form);
      if (n <= Math.min(avail, remaining)) {
        place(s, c, form, n);
        return true;
      }
    }
    return false;
  };
  const fill = (s: LayerState, avail: number) => {
    const start = s.used;
    for (const c of s.candidates) {
      if (s.placed.has(c) || c.protected) continue;
      tryPlace(s, c, avail - (s.used - start));
    }
  };

  // 1. Stable layers.
  let carry = 0;
  for (const name of LAYER_NAMES.filter((n) => STABLE_LAYERS.has(n))) {
    const s = st(name);
    const quota = name === 'system' ? remaining : Math.min(remaining, Math.floor(shares[name] * budgetTokens) + carry);
    s.quota = quota;
    fill(s, quota);
    if (name === 'system') {
      // The prompt may exceed its share; report the share, or what it took beyond it.
      s.quota = Math.max(Math.floor(shares.system * budgetTokens), s.used);
      carry = s.quota - s.used;
    } else {
      carry = quota - s.used;
    }
  }

  // 2. Protected items, best first, wherever they live.
  const volatileBudget = remaining;
  const protectedItems = VOLATILE.flatMap((name) => st(name).candidates.filter((c) => c.protected)).sort(byPriority);
  for (const c of protectedItems) tryPlace(st(c.layer), c, remaining);

  // 3. Volatile layers by share, carrying unused quota forward, then the leftovers.
  const shareSum = VOLATILE.reduce((sum, name) => sum + shares[name], 0);
  carry = 0;
  for (const name of VOLATILE) {
    const s = st(name);
    const base = shareSum > 0 ? Math.floor((shares[name] / shareSum) * volatileBudget) : 0;
    s.quota = base + carry;
    fill(s, Math.max(0, s.quota - s.used));
    carry = Math.max(0, s.quota - s.used);
  }
  for (const name of VOLATILE) {
    const s = st(name);
    const before = s.used;
    fill(s, remaining);
    s.quota += s.used - before;
  }

  // 4. Upgrades, best first across the volatile layers.
  const upgradable = VOLATILE.flatMap((name) => [...st(name).placed].filter(([c, form]) => form === 'compact' && c.compact !== c.full).map(([c]) => c)).sort(byPriority);
  for (const c of upgradable) {
    const s = st(c.layer);
    const delta = lineCost(c, 'full') - lineCost(c, 'compact');
    if (delta <= remaining) {
      s.placed.set(c, 'full');
      s.used += delta;
      remaining -= delta;
      s.quota = Math.max(s.quota, s.used);
    }
  }

  return finish(states, budgetTokens, tokens, textLineCost);
}

/**
 * Line costs (tokens of a text plus its newline) by text, per counter. A rebuild packs mostly the
 * records the last one did, and the counter's own memo would be asked with "text\n", a new
 * string every time (built, copied flat and hashed only to be looked up); keyed by the
 * candidate's own text, the lookup reuses that string's hash, which the dropped-item count and
 * the rendering need anyway. Bounded at 4 Mi characters (a few MiB): the lines of one user's
 * context take ~7,500 characters, so it holds the working set of ~500 active users; at a quarter
 * of a MiB, 200 users in turn (bench/process-message-cpu.bench.mjs) hit it 77% of the time
 * instead of 96%, and each miss runs the tokenizer.
 */
const LINE_MEMO_CHARS = 1 << 22;
const lineMemos = new WeakMap<TokenCounter, TextMemo<number>>();

function lineMemoOf(tokens: TokenCounter): TextMemo<number> {
  let memo = lineMemos.get(tokens);
  if (!memo) lineMemos.set(tokens, (memo = createTextMemo<number>({ maxTotalChars: LINE_MEMO_CHARS })));
  return memo;
}

/**
 * Renders, verifies the exact count, evicts the lowest-priority volatile items if BPE disagrees.
 * `lineCost` is the remembered count of a line with its newline (see `linesCount`).
 */
function finish(
  states: Map<LayerName, LayerState>,
  budgetTokens: number,
  tokens: TokenCounter,
  lineCost: (line: string) => number,
): PackResult {
  for (;;) {
    // Each layer's items in render order, once (layerBlockLines's own sort then finds them sorted).
    const ordered = LAYER_NAMES.map((name) => renderOrder(placedItems(states.get(name)!)));
    const lines = LAYER_NAMES.map((name, i) => layerBlockLines(name, ordered[i]!));
    const blocks = LAYER_NAMES.map((name, i) => ({ name, text: blockText(lines[i]!) }));
    const { text, stablePrefixChars } = joinBlocks(blocks);
    const blockTokens = blocks.map((b, i) => (b.text === '' ? 0 : (linesCount(lines[i]!, tokens, lineCost) ?? tokens.count(b.text))));
    const joined = blocks.flatMap((b, i) => (b.text === '' ? [] : [{ text: b.text, tokens: blockTokens[i]! }]));
    const total = joinedCount(joined, tokens) ?? tokens.count(text);
    if (total <= budgetTokens) {
      const layers: ContextLayer[] = LAYER_NAMES.map((name, i) => {
        const s = states.get(name)!;
        return { name, tokens: blockTokens[i]!, budgetTokens: s.quota, items: ordered[i]!.map((p) => p.item) };
      });
      const dropped: DroppedItem[] = [];
      for (const name of LAYER_NAMES) {
        for (const c of states.get(name)!.candidates) {
          if (!states.get(name)!.placed.has(c)) dropped.push({ layer: name, kind: c.kind, id: c.id, reason: 'budget', tokens: lineCost(c.full) });
        }
      }
      return { text, tokens: total, stablePrefixChars, layers, dropped };
    }
    const victim = pickVictim(states);
    if (!victim) throw new Error('packContext: empty context over budget'); // unreachable: "" has 0 tokens
    states.get(victim.layer)!.placed.delete(victim);
  }
}

/**
 * Tokens of the blocks joined as `joinBlocks` joins them (each block ends with a newline; one
 * more goes between blocks), from the blocks' own counts, without tokenizing the whole text
 * again; undefined when that is not exact, and the caller counts the text.
 *
 * Exact for the plain o200k_base counter: it counts each piece its pre-tokenizer cuts the text
 * into on its own, and that cuts between a newline and a following character that is neither
 * whitespace nor "/" (only whitespace and "/" patterns continue over a newline; the letter
 * patterns' optional leading character excludes newlines; no pattern looks back). So a block
 * starting with such a character is counted alone, and the extra newline after a block changes
 * only its last line (itself after such a cut): by count(last + "\n\n") - count(last + "\n"),
 * short texts the counter remembers. A calibrated counter rounds per call, so it is not additive.
 */
export function joinedCount(blocks: ReadonlyArray<{ text: string; tokens: number }>, tokens: TokenCounter): number | undefined {
  if (tokens.name !== 'o200k_base' || tokens.calibration !== 1) return undefined;
  let total = 0;
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i]!.text;
    if (!block.endsWith('\n') || !cutBefore(block, 0)) return undefined;
    total += blocks[i]!.tokens;
    if (i === blocks.length - 1) break;
    const start = block.lastIndexOf('\n', block.length - 2) + 1;
    if (start >= block.length - 1 || !cutBefore(block, start)) return undefined;
    const last = block.slice(start, -1);
    total += tokens.count(`${last}\n\n`) - tokens.count(`${last}\n`);
  }
  return total;
}

/**
 * Tokens of a block (its lines, each ended by a newline) as the sum of its lines' remembered
 * costs, without tokenizing the block: a block is new text on most rebuilds (another query,
 * other history turns) while its lines are mostly the ones the last rebuild counted. Undefined
 * when that is not exact, and the caller counts the block. Exact by the reasoning of
 * `joinedCount`: every line ends with a newline, and when the next line starts with a character
 * that is neither whitespace nor "/", the pre-tokenizer cuts between them, so each line is
 * counted on its own.
 */
export function linesCount(lines: readonly string[], tokens: TokenCounter, lineCost: (line: string) => number): number | undefined {
  if (tokens.name !== 'o200k_base' || tokens.calibration !== 1) return undefined;
  for (let i = 1; i < lines.length; i++) if (!cutBefore(lines[i]!, 0)) return undefined;
  let total = 0;
  for (const line of lines) total += lineCost(line);
  return total;
}

/** Whether the character at `at` can start a pre-token after a newline (see `joinedCount`). */
function cutBefore(text: string, at: number): boolean {
  const c = text[at];
  return c !== undefined && c !== '/' && !/\s/u.test(c);
}

/** The lowest-priority placed item, volatile layers and unprotected items first. */
function pickVictim(states: Map<LayerName, LayerState>): PackCandidate | undefined {
  const rank = (c: PackCandidate) => (STABLE_LAYERS.has(c.layer) ? 2 : 0) + (c.protected ? 1 : 0);
  let victim: PackCandidate | undefined;
  for (const s of states.values()) {
    for (const c of s.placed.keys()) {
      if (!victim || rank(c) < rank(victim) || (rank(c) === rank(victim) && byPriority(c, victim) > 0)) victim = c;
    }
  }
  return victim;
}

function placedItems(s: LayerState): PlacedItem[] {
  return [...s.placed].map(([c, form]) => {
    const compressed = form === 'compact' && c.compact !== undefined && c.compact !== c.full;
    const item: ContextItem = { kind: c.kind, id: c.id, text: compressed ? c.compact! : c.full, sources: [...c.sources] };
    if (compressed) item.compressed = true;
    const placed: PlacedItem = { item, order: c.order };
    if (c.group !== undefined) {
      placed.group = c.group;
      if (c.groupHeader !== undefined) placed.groupHeader = c.groupHeader;
    }
    return placed;
  });
}

/** Tokens a layer costs before its first item: its title and the blank line before its block. */
function layerOverhead(name: LayerName, cost: (text: string) => number): number {
  const title = LAYER_TITLES[name];
  return (title ? cost(`${title}\n`) : 0) + 1;
}

/** Priority descending, then id, so equal scores still pack in one fixed order. */
export function byPriority(a: PackCandidate, b: PackCandidate): number {
  return b.priority - a.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0);
}
