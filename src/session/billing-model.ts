/**
 * What the provider bills for a reconstructed context, per agent. Text is counted with the
 * calibrated BPE counter (text/calibration.ts) and images by pixel size (image-tokens.ts); this
 * file holds what neither can see: encrypted content, whose base64 text is not what it costs, and
 * the framing every message or item carries. The numbers are fitted to the usage the logs
 * themselves record, on the tune half of the corpus (`npm run bench:trim`, docs/token-accounting.md).
 */
import type { AgentKind } from './context-model.js';

/** Per-agent billing rules beyond the text count. */
export interface AgentBilling {
  readonly agent: AgentKind;
  /**
   * Tokens billed per character of encrypted content that has no `billedTokens` of its own. Claude:
   * a thinking block is billed by the reasoning its signature seals (its summary text is not
   * billed again), which grows with the signature's length.
   */
  readonly encryptedTokensPerChar: number;
  /** Tokens of framing per context entry (a message or an item) that its text does not show. */
  readonly entryTokens: number;
  /** Where the numbers come from. */
  readonly basis: string;
}

/** The billing rules of each agent. */
export const AGENT_BILLING: Readonly<Record<AgentKind, AgentBilling>> = Object.freeze({
  claude: Object.freeze({
    agent: 'claude',
    encryptedTokensPerChar: 0.29,
    entryTokens: 0,
    basis: 'fitted to Claude Code message.usage (tune half of the corpus)',
  }),
  codex: Object.freeze({
    agent: 'codex',
    // reasoning carries billedTokens (the turn's token_count, or 0 once the turn is over)
    encryptedTokensPerChar: 0,
    // each item's role and channel markers around its text
    entryTokens: 10,
    basis: 'fitted to Codex token_count events (tune half of the corpus)',
  }),
} satisfies Record<AgentKind, AgentBilling>);

/** The billing rules for `agent`. */
export function billingFor(agent: AgentKind): AgentBilling {
  return AGENT_BILLING[agent];
}
