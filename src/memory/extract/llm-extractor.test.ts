import { describe, expect, it } from 'vitest';
import type { Extraction, RecentEntity } from '../extraction.js';
import { createRuleExtractor } from './extract.js';
import type { Extractor } from './extractor.js';
import { buildExtractionPrompt, createLlmExtractor, parseLlmReply } from './llm-extractor.js';
import type { LlmFallbackReason } from './llm-extractor.js';

const OPTIONS = { now: Date.parse('2026-03-10T09:30:00+08:00'), timeZone: 'Asia/Shanghai' };
const RECENT: RecentEntity[] = [{ kind: 'task', id: 't1', text: '写周报', status: 'todo' }];

/** The user's llm callback: answers every prompt with a canned reply and records the prompts. */
function cannedLlm(reply: string | (() => Promise<string>)) {
  const prompts: string[] = [];
  const llm = async (prompt: string) => {
    prompts.push(prompt);
    return typeof reply === 'string' ? reply : reply();
  };
  return { llm, prompts };
}

const VALID_REPLY = {
  intent: 'create_task',
  confidence: 0.92,
  entities: [{ type: 'time', text: '下午三点', valueMs: Date.parse('2026-03-10T15:00:00+08:00') }],
  task: { title: '开项目评审会', status: 'todo', priority: 'normal', due: '2026-03-10T15:00:00+08:00', duePhrase: '下午三点', project: null },
  language: 'zh',
};

describe('createLlmExtractor', () => {
  it('uses a valid reply, converting an ISO due to Unix ms and marking the source', async () => {
    const { llm, prompts } = cannedLlm(JSON.stringify(VALID_REPLY));
    const e = await createLlmExtractor({ llm }).extract('记得下午三点要开项目评审会。', OPTIONS);
    expect(e.source).toBe('llm');
    expect(e.intent).toBe('create_task');
    expect(e.task?.due).toBe(Date.parse('2026-03-10T15:00:00+08:00'));
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toContain('"记得下午三点要开项目评审会。"');
    expect(prompts[0]).toContain('2026-03-10 09:30 in time zone Asia/Shanghai');
  });

  it('accepts a reply wrapped in a code fence, with nulls for absent parts', async () => {
    const reply = '```json\n' + JSON.stringify({ ...VALID_REPLY, target: null, memory: null, clarification: null }) + '\n```';
    const e = await createLlmExtractor({ llm: cannedLlm(reply).llm }).extract('记得下午三点要开项目评审会。', OPTIONS);
    expect(e.source).toBe('llm');
    expect(e).not.toHaveProperty('target');
  });

  it('falls back to the rules on invalid JSON', async () => {
    const reasons: LlmFallbackReason[] = [];
    const extractor = createLlmExtractor({ llm: cannedLlm('Sure! The intent is create_task.').llm, onFallback: (r) => reasons.push(r) });
    const e = await extractor.extract('记得下午三点要开项目评审会。', OPTIONS);
    expect(e.source).toBe('rules');
    expect(e.task?.title).toBe('开项目评审会');
    expect(reasons).toEqual(['invalid-json']);
  });

  it('falls back on a schema violation and says which field', async () => {
    const bad = { ...VALID_REPLY, intent: 'make_coffee', confidence: 1.7 };
    const details: string[] = [];
    const extractor = createLlmExtractor({ llm: cannedLlm(JSON.stringify(bad)).llm, onFallback: (_r, d) => details.push(d) });
    const e = await extractor.extract('记得下午三点要开项目评审会。', OPTIONS);
    expect(e.source).toBe('rules');
    expect(details[0]).toMatch(/intent/);
    expect(details[0]).toMatch(/confidence/);
  });

  it('falls back when the reply names a record that was not offered', async () => {
    const reply = { intent: 'complete_task', confidence: 0.9, entities: [], target: { kind: 'task', id: 'made-up', phrase: '它', confidence: 0.9 }, language: 'zh' };
    const reasons: LlmFallbackReason[] = [];
    const extractor = createLlmExtractor({ llm: cannedLlm(JSON.stringify(reply)).llm, onFallback: (r) => reasons.push(r) });
    const e = await extractor.extract('它完成了', { ...OPTIONS, recent: RECENT });
    expect(reasons).toEqual(['unknown-target']);
    expect(e).toMatchObject({ source: 'rules', intent: 'complete_task', target: { id: 't1' } });
  });

  it('falls back when the llm callback throws, to the fallback given', async () => {
    const calls: string[] = [];
    const fallback: Extractor = {
      name: 'mine',
      extract: async (text): Promise<Extraction> => {
        calls.push(text);
        return { intent: 'chat', confidence: 0.5, entities: [], language: 'en', source: 'rules' };
      },
    };
    const llm = cannedLlm(() => Promise.reject(new Error('network down'))).llm;
    const e = await createLlmExtractor({ llm, fallback }).extract('hello', OPTIONS);
    expect(e.intent).toBe('chat');
    expect(calls).toEqual(['hello']);
  });

  it('rejects bad options before calling the llm', async () => {
    const { llm, prompts } = cannedLlm(JSON.stringify(VALID_REPLY));
    await expect(createLlmExtractor({ llm }).extract('hi', { now: Number.NaN, timeZone: 'UTC' })).rejects.toThrow(/now/);
    expect(prompts).toHaveLength(0);
  });
});

describe('prompt and reply helpers', () => {
  it('lists recent records in order and quotes the message as JSON', () => {
    const prompt = buildExtractionPrompt('delete "the second one"', { ...OPTIONS, recent: RECENT });
    expect(prompt).toContain('1. {"kind":"task","id":"t1","text":"写周报","status":"todo"}');
    expect(prompt).toContain('Message (JSON string): "delete \\"the second one\\""');
  });

  it('reads a valid reply and rejects extra keys', () => {
    expect(parseLlmReply(JSON.stringify(VALID_REPLY), []).ok).toBe(true);
    const extra = parseLlmReply(JSON.stringify({ ...VALID_REPLY, mood: 'happy' }), []);
    expect(extra).toMatchObject({ ok: false, reason: 'schema' });
  });

  it('agrees in shape with the rule extractor', () => {
    const rules = createRuleExtractor().extract('记得下午三点要开项目评审会。', OPTIONS);
    const { source: _source, ...asReply } = rules;
    expect(parseLlmReply(JSON.stringify(asReply), []).ok).toBe(true);
  });
});
