/**
 * Model prices for the prompt-caching cost model, in USD per million tokens. Data, not code:
 * update the table when providers change prices. Anthropic: cache writes cost 1.25x input for the
 * 5-minute TTL and 2x for the 1-hour TTL, cache reads 0.1x. OpenAI: cached input is discounted,
 * writes cost nothing extra and the cache lives ~5-10 minutes (modelled as the 5-minute TTL).
 */

export interface ModelPrice {
  /** Lower-case model-name prefix; the longest match wins. */
  prefix: string;
  /** Uncached input, USD per MTok. */
  input: number;
  /** Cache write with a 5-minute TTL, USD per MTok. */
  cacheWrite5m: number;
  /** Cache write with a 1-hour TTL, USD per MTok. */
  cacheWrite1h: number;
  /** Cache read, USD per MTok. */
  cacheRead: number;
  /** Output, USD per MTok. */
  output: number;
  /** Where the numbers come from. */
  source: string;
}

const anthropic = (prefix: string, input: number, output: number): ModelPrice => ({
  prefix,
  input,
  cacheWrite5m: input * 1.25,
  cacheWrite1h: input * 2,
  cacheRead: input * 0.1,
  output,
  source: 'Anthropic list prices (cache write 1.25x/2x, read 0.1x of input)',
});
const openai = (prefix: string, input: number, cached: number, output: number): ModelPrice => ({
  prefix,
  input,
  cacheWrite5m: input,
  cacheWrite1h: input,
  cacheRead: cached,
  output,
  source: 'OpenAI list prices (automatic caching: no write premium)',
});

export const MODEL_PRICES: readonly ModelPrice[] = [
  anthropic('claude-opus-4-5', 5, 25),
  anthropic('claude-opus-4-6', 5, 25),
  anthropic('claude-opus-4-1', 15, 75),
  anthropic('claude-opus-4-0', 15, 75),
  anthropic('claude-opus-4-2', 15, 75),
  anthropic('claude-opus', 5, 25),
  anthropic('claude-sonnet', 3, 15),
  anthropic('claude-3-7-sonnet', 3, 15),
  anthropic('claude-haiku-4', 1, 5),
  anthropic('claude-3-5-haiku', 0.8, 4),
  anthropic('claude', 3, 15),
  openai('gpt-5-mini', 0.25, 0.025, 2),
  openai('gpt-5-nano', 0.05, 0.005, 0.4),
  openai('gpt-5', 1.25, 0.125, 10),
  openai('gpt-4.1', 2, 0.5, 8),
  openai('gpt-4o', 2.5, 1.25, 10),
  openai('o3', 2, 0.5, 8),
  openai('o4-mini', 1.1, 0.275, 4.4),
  openai('codex', 1.25, 0.125, 10),
];

/** Price row for a model; falls back to Claude Sonnet pricing for unknown models (flagged). */
export function priceFor(model: string | undefined): ModelPrice & { matched: boolean } {
  const name = (model ?? '').toLowerCase().split('/').pop() ?? '';
  let best: ModelPrice | undefined;
  for (const row of MODEL_PRICES) if (name.startsWith(row.prefix) && (!best || row.prefix.length > best.prefix.length)) best = row;
  if (best) return { ...best, matched: true };
  return { ...MODEL_PRICES.find((p) => p.prefix === 'claude-sonnet')!, matched: false };
}
