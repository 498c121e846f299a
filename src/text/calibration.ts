/**
 * Token-count calibration: ctxvm counts with OpenAI's o200k_base BPE everywhere and scales the
 * result for models whose own tokenizer differs. The Claude factor is fitted to the usage real
 * Claude Code logs record (tune half of the corpus, checked on the other half by bench:trim); the
 * others are exact or measured on English and code. Pass `calibration` to
 * `createTokenCounter`, or derive one from real API `usage` figures with `calibrationFromUsage`.
 */
import { UsageError } from '../errors.js';

/** One row of the calibration table: models whose lower-cased name starts with `prefix`. */
export interface ModelCalibration {
  /** Model-name prefix, lower case, without a provider prefix ("claude", "gpt-4o"). */
  readonly prefix: string;
  /** Multiply an o200k_base count by this to estimate the model's own count. */
  readonly factor: number;
  /** Where the factor comes from. */
  readonly basis: string;
}

/** Model-name prefixes to o200k_base calibration factors; the longest matching prefix wins, unknown models get 1. */
export const MODEL_CALIBRATION: readonly ModelCalibration[] = Object.freeze([
  { prefix: 'gpt-4o', factor: 1, basis: 'uses o200k_base: exact' },
  { prefix: 'gpt-4.1', factor: 1, basis: 'uses o200k_base: exact' },
  { prefix: 'gpt-4.5', factor: 1, basis: 'uses o200k_base: exact' },
  { prefix: 'gpt-5', factor: 1, basis: 'uses o200k_base: exact' },
  { prefix: 'gpt-oss', factor: 1, basis: 'o200k_harmony: same merges as o200k_base' },
  { prefix: 'o1', factor: 1, basis: 'uses o200k_base: exact' },
  { prefix: 'o3', factor: 1, basis: 'uses o200k_base: exact' },
  { prefix: 'o4', factor: 1, basis: 'uses o200k_base: exact' },
  { prefix: 'codex', factor: 1, basis: 'uses o200k_base: exact' },
  {
    prefix: 'gpt-4',
    factor: 1,
    basis: 'cl100k_base, measured: 0.99-1.01x o200k_base on English and code, about 1.4x on Chinese',
  },
  { prefix: 'gpt-3.5', factor: 1, basis: 'cl100k_base, as gpt-4' },
  {
    prefix: 'claude',
    factor: 1.31,
    basis: "fitted to the usage Claude Code logs record (Anthropic's tokenizer is not public); docs/token-accounting.md",
  },
].map((row) => Object.freeze(row)));

/** The calibration factor for `model` from MODEL_CALIBRATION (1 when unknown or undefined). */
export function calibrationForModel(model: string | undefined): number {
  return findCalibration(model)?.factor ?? 1;
}

/** The MODEL_CALIBRATION row that applies to `model`, if any. */
export function findCalibration(model: string | undefined): ModelCalibration | undefined {
  if (model === undefined) return undefined;
  // "anthropic/claude-sonnet-4" (OpenRouter style) and "claude-sonnet-4" calibrate alike.
  const name = model.trim().toLowerCase().split('/').pop() ?? '';
  let best: ModelCalibration | undefined;
  for (const row of MODEL_CALIBRATION) {
    if (name.startsWith(row.prefix) && (best === undefined || row.prefix.length > best.prefix.length)) best = row;
  }
  return best;
}

/** One observation: our local o200k count for some input, and what the provider billed for it. */
export interface UsageSample {
  /** The text that was counted, kept for the caller's reference; not used in the computation. */
  text?: string;
  /** Tokens counted locally with an uncalibrated o200k_base counter (calibration 1). */
  localTokens: number;
  /** Input tokens the provider reported for the same content (`usage.input_tokens` / `prompt_tokens`). */
  reportedTokens: number;
}

/**
 * A calibration factor from real usage: the median of reportedTokens / localTokens over the
 * samples with positive counts, so a few odd requests (cached prefixes, tool schemas) do not skew
 * it. Throws a UsageError when no sample is usable.
 */
export function calibrationFromUsage(samples: readonly UsageSample[]): number {
  const ratios: number[] = [];
  for (const sample of samples) {
    const { localTokens, reportedTokens } = sample;
    if (!(Number.isFinite(localTokens) && Number.isFinite(reportedTokens))) continue;
    if (localTokens <= 0 || reportedTokens <= 0) continue;
    ratios.push(reportedTokens / localTokens);
  }
  if (ratios.length === 0) {
    throw new UsageError(`calibrationFromUsage: none of the ${samples.length} samples has positive local and reported token counts`, {
      hint: 'pass samples like { localTokens: counter.count(text), reportedTokens: response.usage.input_tokens }',
    });
  }
  ratios.sort((a, b) => a - b);
  const mid = ratios.length >> 1;
  return ratios.length % 2 === 1 ? ratios[mid]! : (ratios[mid - 1]! + ratios[mid]!) / 2;
}
