/** The text primitives every engine shares, on three short sentences: tokens, search terms, due times. */
import type { DemoContext, DemoSection } from './section.js';

const SEED = ['记得下午三点要开项目评审会。', '另外，下班前需要把周报发给我。', 'Ship the release notes by end of week.'];

/** One sentence, analysed. */
export interface TextDemoItem {
  text: string;
  /** o200k tokens. */
  tokens: number;
  /** Search terms (jieba for Chinese). */
  segments: string[];
  /** The due time found, resolved in the demo's time zone (ISO-8601). */
  due: { phrase: string; at: string } | null;
}

/** Runs the text primitives on the seed sentences. */
export async function runTextDemo(ctx: DemoContext): Promise<TextDemoItem[]> {
  const [{ createTokenCounter }, { createSegmenter }, { resolveDue }] = await Promise.all([import('../text/tokens.js'), import('../text/segment.js'), import('../text/dates.js')]);
  const tokens = createTokenCounter();
  const segmenter = createSegmenter();
  return SEED.map((text) => {
    const due = resolveDue(text, { now: ctx.nowMs, timeZone: ctx.timeZone });
    return { text, tokens: tokens.count(text), segments: segmenter.segment(text), due: due ? { phrase: due.text, at: new Date(due.dueMs).toISOString() } : null };
  });
}

/** `ctxvm demo`'s text section. */
export const textSection: DemoSection<TextDemoItem[]> = {
  name: 'text',
  title: 'Text: tokens (o200k), search terms (jieba), due times',
  run: runTextDemo,
  render: (items) => items.flatMap((t) => [t.text, `  ${t.tokens} tokens · [${t.segments.join(' ')}]${t.due ? ` · "${t.due.phrase}" → ${t.due.at}` : ''}`]),
};
