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
}

export interface AgentContext {
  agent: AgentKind;
  entries: ContextEntry[];
  /** Model recorded in the session (last assistant reply), if any. */
  model?: string;
}
