/**
 * Deterministic rendering of a packed context: which bytes a layer and its items become.
 *
 * Layout: one block per non-empty layer, in `LAYER_NAMES` order, each `# Title` then its lines;
 * blocks are separated by one empty line that belongs to the block after it, so the text of the
 * stable layers is a prefix of the whole text whatever the volatile layers hold. Items within a
 * layer are ordered by their `order` key (never by score), and grouped items (history turns of
 * one session) sit under their group's header line. No clock, locale or map order is consulted.
 */
import { remembered } from '../../core/remembered.js';
import type { ContextItem, LayerName } from '../context.js';

/** Layers whose text may not depend on the query: they form the cacheable prefix. */
export const STABLE_LAYERS: ReadonlySet<LayerName> = new Set(['system', 'profile', 'project']);

/** Heading of each layer's block; the system layer has none (its text is the prompt itself). */
export const LAYER_TITLES: Readonly<Record<LayerName, string | null>> = {
  system: null,
  profile: '# User profile',
  project: '# Active project',
  tasks: '# Open tasks',
  history: '# Related conversation history',
  memories: '# Other memories',
};

/** An item placed in a layer, with the form the packer chose. */
export interface PlacedItem {
  item: ContextItem;
  /** Render order within the layer (and within its group); compared as strings. */
  order: string;
  /** Group key, when the item belongs under a group header. */
  group?: string;
  /** The group's header line (same for every item of the group). */
  groupHeader?: string;
}

/** The text of one layer's block, without the separator before it; "" for an empty layer. */
export function renderLayerBlock(name: LayerName, placed: readonly PlacedItem[]): string {
  return blockText(layerBlockLines(name, placed));
}

/** A block's text from its lines (`layerBlockLines`): each line ends with a newline. */
export const blockText = (lines: readonly string[]): string => (lines.length === 0 ? '' : `${lines.join('\n')}\n`);

/** The lines of one layer's block (title, group headers, items), none for an empty layer. */
export function layerBlockLines(name: LayerName, placed: readonly PlacedItem[]): string[] {
  if (placed.length === 0) return [];
  const lines: string[] = [];
  const ordered = renderOrder(placed);
  const title = LAYER_TITLES[name];
  // A group with a heading of its own ("# …") that comes first stands in for the layer's title.
  const titledGroupFirst = ordered[0]!.group !== undefined && ordered[0]!.groupHeader?.startsWith('# ') === true;
  if (title && !titledGroupFirst) lines.push(title);
  let lastGroup: string | undefined;
  for (const p of ordered) {
    if (p.group !== undefined && p.group !== lastGroup && p.groupHeader) lines.push(p.groupHeader);
    lastGroup = p.group;
    lines.push(p.item.text);
  }
  return lines;
}

/** Items in the order they are rendered: groups by their earliest item, items by `order`. */
export function renderOrder(placed: readonly PlacedItem[]): PlacedItem[] {
  const sorted = [...placed].sort((a, b) => compareStrings(a.order, b.order));
  const groupOrder = new Map<string, string>();
  for (const p of sorted) if (p.group !== undefined && !groupOrder.has(p.group)) groupOrder.set(p.group, p.order);
  const key = (p: PlacedItem) => (p.group !== undefined ? groupOrder.get(p.group)! : p.order);
  return sorted.sort((a, b) => compareStrings(key(a), key(b)) || compareStrings(a.group ?? '', b.group ?? '') || compareStrings(a.order, b.order));
}

/** Joins layer blocks; returns the text and the length of its stable prefix (UTF-16 code units). */
export function joinBlocks(blocks: ReadonlyArray<{ name: LayerName; text: string }>): { text: string; stablePrefixChars: number } {
  let text = '';
  let stablePrefixChars = 0;
  for (const block of blocks) {
    if (block.text === '') continue;
    text += text === '' ? block.text : `\n${block.text}`;
    if (STABLE_LAYERS.has(block.name)) stablePrefixChars = text.length;
  }
  return { text, stablePrefixChars };
}

/** Code-unit comparison (not locale-aware, so identical on every machine). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// Keys of ids seen lately: record ids come back on every rebuild (every open task, the record
// pool), and a generated id has digit runs enough to make the key several times its length.
const naturalKeys = new Map<string, string>();
const NATURAL_KEYS_LIMIT = 50_000;

/** A sort key for ids with numbers in them ("D1:9" before "D1:10"): digit runs are zero-padded. */
export function naturalKey(id: string): string {
  return remembered(naturalKeys, id, NATURAL_KEYS_LIMIT, naturalKeyOf);
}

function naturalKeyOf(id: string): string {
  // A hand-written scan: this runs for every new id a rebuild meets.
  let out = '';
  let from = 0;
  for (let i = 0; i < id.length; ) {
    const c = id.charCodeAt(i);
    if (c < 48 || c > 57) {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < id.length && id.charCodeAt(end) >= 48 && id.charCodeAt(end) <= 57) end++;
    let start = i;
    while (start < end - 1 && id.charCodeAt(start) === 48) start++; // leading zeros, keeping one digit
    out += id.slice(from, i) + id.slice(start, end).padStart(12, '0');
    from = i = end;
  }
  return from === 0 ? id : out + id.slice(from);
}

/** A fixed-width sort key for an instant (Unix ms, may be negative). */
export function instantKey(ms: number): string {
  return (Math.round(ms) + 9e15).toString().padStart(17, '0');
}

// Whitespace other than a space, two spaces, or a space at either end: what oneLine would change.
const NOT_ONE_LINE = /[^\S ]| {2}|^ | $/;

/** Collapses whitespace runs (newlines included) to single spaces, so one item stays one line. */
export function oneLine(text: string): string {
  // Most texts already are one line: testing is cheaper than rewriting (and copying) every one.
  if (!NOT_ONE_LINE.test(text)) return text;
  return text.replace(/\s+/g, ' ').trim();
}
