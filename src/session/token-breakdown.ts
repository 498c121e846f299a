/** Token counts of an AgentContext: per entry and per category, with one tokenizer. */
import type { TokenCounter } from '../text/tokens.js';
import { TOKEN_CATEGORIES, type AgentContext, type TokenCategory } from './context-model.js';
import { imageTokens } from './image-tokens.js';

export interface TokenBreakdown {
  /** Total tokens of the context. */
  tokens: number;
  /** Tokens per category (every category present, 0 when empty). */
  breakdown: Record<TokenCategory, number>;
  /** Tokens per entry, in order (with the entry's role and first line). */
  perEntry: { role: string; line: number; tokens: number; injected?: boolean }[];
  /** How the counts were made, e.g. "o200k_base*1.2; images by pixel size". */
  method: string;
}

export function countContextTokens(ctx: AgentContext, counter: TokenCounter): TokenBreakdown {
  const breakdown = Object.fromEntries(TOKEN_CATEGORIES.map((c) => [c, 0])) as Record<TokenCategory, number>;
  const perEntry: TokenBreakdown['perEntry'] = [];
  let tokens = 0;
  for (const e of ctx.entries) {
    let n = 0;
    for (const p of e.parts) {
      const t = p.category === 'image' ? imageTokens(p.text) : counter.count(p.text);
      breakdown[p.category] += t;
      n += t;
    }
    tokens += n;
    perEntry.push({ role: e.role, line: e.line, tokens: n, ...(e.injected ? { injected: true } : {}) });
  }
  return { tokens, breakdown, perEntry, method: `${counter.name}; images by pixel size` };
}
