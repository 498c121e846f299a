/**
 * The agent-neutral view of a reconstructed context, used for token accounting and reports:
 * messages (Claude) or items (Codex) flattened into parts, each with a token category and the
 * text that is sent for it.
 */

/** Agents ctxvm reads and writes sessions for. */
export type AgentKind = 'claude' | 'codex';

/** Where the tokens of a context go. */
export type TokenCategory =
  | 'userText'
  | 'assistantText'
  | 'toolInput'
  | 'toolResult'
  | 'image'
  | 'thinking'
  | 'system';

export const TOKEN_CATEGORIES: readonly TokenCategory[] = ['userText', 'assistantText', 'toolInput', 'toolResult', 'image', 'thinking', 'system'];

/** One piece of a message as sent to the model. */
export interface ContextPart {
  category: TokenCategory;
  /** What is sent for this part (for an image: its base64 data). */
  text: string;
  /**
   * Characters of encrypted content sent with the part (a Claude thinking block's signature, a
   * redacted thinking block, Codex `encrypted_content`). What it costs is not its base64 text:
   * see billing-model.ts.
   */
  encryptedChars?: number;
  /** Tokens the provider bills for the part when the agent's rules fix them (the counter is not run). */
  billedTokens?: number;
}

/** One message (Claude) or item (Codex) of the context. */
export interface ContextEntry {
  /** 'user' | 'assistant' for Claude; the item type or message role for Codex. */
  role: string;
  /** First file line the entry came from (0 for entries the agent injects on resume). */
  line: number;
  parts: ContextPart[];
  /** Added by the agent itself on resume (repairs), not present in the file. */
  injected?: boolean;
  /** Sent but not billed, framing included (Codex reasoning of finished turns: the API drops it). */
  notBilled?: boolean;
}

export interface AgentContext {
  agent: AgentKind;
  entries: ContextEntry[];
  /** Model recorded in the session (last assistant reply), if any. */
  model?: string;
}
