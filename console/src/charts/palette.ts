/** Chart colours, one place: token categories, the two cost lines, DAG node kinds. */
import type { TokenCategory } from '../api-types.js';

export const CATEGORY_COLORS: Record<TokenCategory, string> = {
  userText: '#4e79a7',
  assistantText: '#59a14f',
  toolInput: '#f28e2b',
  toolResult: '#e15759',
  image: '#b07aa1',
  thinking: '#76b7b2',
  system: '#9d9da1',
};

export const UNTRIMMED_COLOR = '#e15759';
export const TRIMMED_COLOR = '#2f6fdf';
export const GOOD_COLOR = '#2e9d5b';
export const WARN_COLOR = '#d9822b';
export const BAD_COLOR = '#d64545';
