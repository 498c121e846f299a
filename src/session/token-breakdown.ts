/**
 * Token counts of an AgentContext as the provider bills them: per entry and per category. Text is
 * counted by the calibrated BPE counter, images by pixel size, encrypted content and framing by
 * the agent's billing rules (billing-model.ts); a part whose cost the agent's rules fix
 * (`billedTokens`) is not counted at all.
 */
import type { TokenCounter } from '../text/tokens.js';
import { billingFor, type AgentBilling } from './billing-model.js';
import { TOKEN_CATEGORIES, type AgentContext, type ContextEntry, type ContextPart, type TokenCategory } from './context-model.js';
import { imageTokens } from './image-tokens.js';

export interface TokenBreakdown {
  /** Total tokens of the context. */
  tokens: number;
  /** Tokens per category (every category present, 0 when empty). */
  breakdown: Record<TokenCategory, number>;
  /** Tokens per entry, in order (with the entry's role and first line). */
  perEntry: { role: string; line: number; tokens: number; injected?: boolean }[];
  /** How the counts were made, e.g. "o200k_base*1.25; thinking by signature length; images by pixel size". */
  method: string;
}

/** Whether a part's cost is its text counted by the tokenizer (not fixed, an image, or encrypted). */
export function isCountedText(part: ContextPart): boolean {
  return part.billedTokens === undefined && part.category !== 'image' && !part.encryptedChars;
}

/** Tokens one part costs. */
export function partTokens(part: ContextPart, counter: TokenCounter, billing: AgentBilling): number {
  if (part.billedTokens !== undefined) return part.billedTokens;
  if (part.category === 'image') return imageTokens(part.text);
  if (part.encryptedChars) return Math.round(part.encryptedChars * billing.encryptedTokensPerChar);
  return counter.count(part.text);
}

/** Tokens one entry costs: its parts plus the agent's framing. */
export function entryTokens(entry: ContextEntry, counter: TokenCounter, billing: AgentBilling): number {
  if (entry.notBilled) return 0;
  let n = billing.entryTokens;
  for (const p of entry.parts) n += partTokens(p, counter, billing);
  return n;
}

/** Says how countContextTokens counted, for reports. */
export function countingMethod(agent: AgentContext['agent'], counter: TokenCounter, billing: AgentBilling = billingFor(agent)): string {
  const parts = [counter.name];
  if (agent === 'claude') parts.push(`thinking by signature length (${billing.encryptedTokensPerChar}/char)`);
  else parts.push('reasoning of finished turns not billed');
  if (billing.entryTokens) parts.push(`+${billing.entryTokens} an entry`);
  parts.push('images by pixel size');
  return parts.join('; ');
}

export function countContextTokens(ctx: AgentContext, counter: TokenCounter, billing: AgentBilling = billingFor(ctx.agent)): TokenBreakdown {
  const breakdown = Object.fromEntries(TOKEN_CATEGORIES.map((c) => [c, 0])) as Record<TokenCategory, number>;
  const perEntry: TokenBreakdown['perEntry'] = [];
  let tokens = 0;
  for (const e of ctx.entries) {
    let n = 0;
    if (e.notBilled) {
      perEntry.push({ role: e.role, line: e.line, tokens: 0, ...(e.injected ? { injected: true } : {}) });
      continue;
    }
    for (const p of e.parts) {
      const t = partTokens(p, counter, billing);
      breakdown[p.category] += t;
      n += t;
    }
    if (billing.entryTokens) {
      // framing counts with the entry's first part (what the entry mostly is)
      breakdown[e.parts[0]?.category ?? 'system'] += billing.entryTokens;
      n += billing.entryTokens;
    }
    tokens += n;
    perEntry.push({ role: e.role, line: e.line, tokens: n, ...(e.injected ? { injected: true } : {}) });
  }
  return { tokens, breakdown, perEntry, method: countingMethod(ctx.agent, counter, billing) };
}
