/**
 * The clock block of a rebuilt context: the current date, weekday, time and zone, so a model can
 * resolve "this afternoon" or "下午后还有啥要做". It is the first block after the stable
 * prefix (system, profile, project), so the prefix stays byte-identical from turn to turn while
 * the clock moves.
 *
 * Its tokens are reserved before the memory layers are packed, with a reserve that does not
 * depend on `now` (`clockReserveTokens`): the layers packed for one minute are the layers of any
 * other, so a cached rebuild serves later minutes with a fresh clock and stays exactly what a
 * rebuild would produce (rebuild.ts).
 */
import type { TimeZone } from '../../core/time-zone.js';
import type { TokenCounter } from '../../text/tokens.js';
import { formatLocalTime, formatUtcOffset, zoneLabel } from '../format-time.js';

/** Start of the clock block: its heading and its only line. */
export const CLOCK_TITLE = '# Now:';

/**
 * The clock block's text (one heading line, ended by a newline) for `nowMs` in `zone`: date,
 * time, weekday and zone. One line because its tokens come out of every budget (a 600-token
 * context loses a memory line to a two-line sentence); the offset is left out only where it
 * adds nothing ("UTC").
 */
export function clockBlock(nowMs: number, zone: TimeZone): string {
  const label = zoneLabel(zone);
  const offset = formatUtcOffset(nowMs, zone);
  const where = label === offset || (label === 'UTC' && offset === 'UTC+00:00') ? label : `${label} (${offset})`;
  return `${CLOCK_TITLE} ${formatLocalTime(nowMs, zone)}, ${where}; all times here are in this zone\n`;
}

const DAY_MS = 86_400_000;
// A week in January and one in July: every weekday name, standard and summer offsets. The date
// and clock digits cost the same whatever their value (o200k_base has a token for every number
// below 1000, and the pre-tokenizer cuts digit runs from the punctuation around them).
const SAMPLE_INSTANTS = [Date.UTC(2026, 0, 5, 13, 30), Date.UTC(2026, 6, 6, 13, 30)].flatMap((start) => Array.from({ length: 7 }, (_, i) => start + i * DAY_MS));
const reserves = new WeakMap<TokenCounter, Map<string, number>>();
const RESERVES_PER_COUNTER = 512;

/**
 * Tokens set aside for the clock block in `zone`, the same at every instant: the most any sample
 * week day in winter or summer costs with the newline that joins it to the block after it, and
 * one more for the joint before it (a prefix's last line may gain a token from a second newline).
 */
export function clockReserveTokens(zone: TimeZone, tokens: TokenCounter): number {
  let byZone = reserves.get(tokens);
  if (!byZone) reserves.set(tokens, (byZone = new Map()));
  const key = String(zone);
  let reserve = byZone.get(key);
  if (reserve === undefined) {
    reserve = Math.max(...SAMPLE_INSTANTS.map((at) => tokens.count(`${clockBlock(at, zone)}\n`))) + 1;
    if (byZone.size >= RESERVES_PER_COUNTER) byZone.clear();
    byZone.set(key, reserve);
  }
  return reserve;
}

/** A packed context before and after the clock goes in. */
export interface ClockedText {
  text: string;
  tokens: number;
  stablePrefixChars: number;
}

/**
 * `packed` with `block` placed right after its stable prefix, and the tokens of the result. The
 * count is exact: by parts when the counter is the plain o200k_base one and the joints are cuts
 * of its pre-tokenizer (see `joinedCount` in pack.ts), else by counting the whole text.
 */
export function insertClock(packed: ClockedText, block: string, tokens: TokenCounter): ClockedText & { clockTokens: number } {
  const prefix = packed.text.slice(0, packed.stablePrefixChars);
  // Blocks are joined by one empty line, which belongs to the block after it.
  const rest = prefix === '' ? packed.text : packed.text.slice(packed.stablePrefixChars + 1);
  const parts = [prefix, block, rest].filter((p) => p !== '');
  const text = parts.join('\n');
  const additive = tokens.name === 'o200k_base' && tokens.calibration === 1 && (rest === '' || startsPretoken(rest)) && (prefix === '' || lastLineStartsPretoken(prefix));
  let clockTokens: number;
  if (additive) {
    // Joints: prefix→block costs what prefix's last line gains from a second newline; block→rest
    // the same for the block's last line; prefix→rest, now gone, was already in packed.tokens.
    clockTokens = tokens.count(block) + (rest !== '' ? extraNewline(block, tokens) : 0) + (prefix !== '' && rest === '' ? extraNewline(prefix, tokens) : 0);
  } else {
    clockTokens = tokens.count(text) - packed.tokens;
  }
  return { text, tokens: packed.tokens + clockTokens, stablePrefixChars: packed.stablePrefixChars, clockTokens };
}

/** What the last line of `block` (ending in a newline) costs more followed by a second one. */
function extraNewline(block: string, tokens: TokenCounter): number {
  const start = block.lastIndexOf('\n', block.length - 2) + 1;
  const last = block.slice(start, -1);
  return tokens.count(`${last}\n\n`) - tokens.count(`${last}\n`);
}

function startsPretoken(text: string): boolean {
  const c = text[0];
  return c !== undefined && c !== '/' && !/\s/u.test(c);
}

function lastLineStartsPretoken(block: string): boolean {
  if (!block.endsWith('\n')) return false;
  const start = block.lastIndexOf('\n', block.length - 2) + 1;
  return start < block.length - 1 && startsPretoken(block.slice(start));
}
