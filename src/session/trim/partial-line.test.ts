/**
 * Partly read lines (partial-line.ts) against JSON.parse and JSON.stringify: on every line of the
 * corpus and of generated sessions, what the transform reads is what a full parse gives, and the
 * text written after the transform's kinds of edits is JSON.stringify's of the fully parsed line
 * with the same edits.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { contentRegions } from './lift.js';
import { EDIT_SLOTS, EditFact, EditSlot, skimClaudeForTrim } from '../claude/line-skim.js';
import { scanClaudeSession } from '../claude/scan.js';
import { partialFromEdits, readPartialLine, type PartialLine } from './partial-line.js';
import { claudeMainSessions, generateClaudeSession, generatorSkipReason } from '../../../test/support/corpus.js';

const root = mkdtempSync(join(tmpdir(), 'ctxvm-partial-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Line = Record<string, unknown> & { message?: { content?: unknown } };

/** The edits a trim makes, on any object with the line's shape. */
const edits: ((v: Line) => void)[] = [
  () => undefined,
  (v) => delete v.toolUseResult,
  (v) => (v.parentUuid = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'),
  (v) => {
    if (v.message && Array.isArray(v.message.content)) v.message.content = [{ type: 'text', text: '[ctxvm paged out 3 lines]' }];
  },
  (v) => {
    delete v.toolUseResult;
    v.parentUuid = null;
    v.ctxvm = { v: 3 };
  },
];

/** A line read partly by each way there is: scanning it, and from pass 1's notes (`edits`). */
type Reader = ((b: Buffer) => PartialLine | undefined) & { inPlace?: boolean };

/** A line read partly by each way there is; `inPlace`: a reader that writes back only the members the line has. */
function readers(bytes: Buffer): Reader[] {
  const fromEdits: Reader = (b: Buffer) => {
    const edits = new Int32Array(EDIT_SLOTS);
    const skeleton = skimClaudeForTrim(b, false, edits, 0);
    return skeleton ? partialFromEdits(b, edits, 0, String(skeleton.type)) : undefined;
  };
  fromEdits.inPlace = true;
  return [(b: Buffer) => readPartialLine(b), fromEdits].filter((read) => read(bytes) !== undefined);
}
/** Checks `text` (a JSON object line) with every reader; true when some read it partly. */
function check(text: string, where: string): boolean {
  const bytes = Buffer.from(text);
  const ways = readers(bytes);
  for (const read of ways) checkWith(read, text, bytes, where);
  return ways.length > 0;
}

function checkWith(read: Reader, text: string, bytes: Buffer, where: string): void {
  const full = JSON.parse(text) as Line;
  const partial = read(bytes)!;
  expect(partial.regions, where).toEqual(contentRegions(bytes));
  const value = partial.value as Line;
  expect(value.message, where).toEqual(full.message);
  for (const key of ['type', 'parentUuid']) expect(value[key], `${where} ${key}`).toEqual(full[key]);
  const status = (tur: unknown) => (tur && typeof tur === 'object' ? { exitCode: (tur as Line).exitCode, interrupted: (tur as Line).interrupted } : {});
  if ('toolUseResult' in full) expect(status(value.toolUseResult), where).toEqual(status(full.toolUseResult));
  for (const edit of edits) {
    const p = read(bytes)!;
    const f = JSON.parse(text) as Line;
    const keys = Object.keys(f).length;
    edit(f);
    // a trim never adds a member (the annotation is appended to the text): such edits test the scanning reader only
    if (read.inPlace && (Object.keys(f).length > keys || 'ctxvm' in f)) continue;
    edit(p.value as Line);
    expect(p.json(), where).toBe(JSON.stringify(f));
  }
}

describe('partly read lines', () => {
  it('read and write hand-built lines as JSON.parse and JSON.stringify do', () => {
    const lines = [
      { parentUuid: null, type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x'.repeat(9000) }] }, uuid: 'u', toolUseResult: { stdout: 'y'.repeat(9000), exitCode: 2, interrupted: false } },
      { type: 'assistant', big: { nested: ['z'.repeat(9000)] }, message: { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }] } },
      { toolUseResult: 'Error: a string side channel', type: 'user', message: { role: 'user', content: 'plain' } },
      { message: { role: 'user', content: 'é "quoted" \\ \u0001 🚀' }, parentUuid: 'p', type: 'user' },
    ];
    for (const [i, line] of lines.entries()) {
      const text = JSON.stringify(line);
      if (i === 2) expect(readPartialLine(Buffer.from(text)), 'a string toolUseResult: scanned, parsed whole').toBeUndefined();
      expect(check(text, `hand ${i}`)).toBe(true);
    }
    // "__proto__" stays an own property, as with JSON.parse
    const proto = '{"type":"user","__proto__":{"polluted":1},"message":{"role":"user","content":"x"}}';
    expect(check(proto, 'proto')).toBe(true);
    expect(Object.getPrototypeOf(readPartialLine(Buffer.from(proto))!.value)).toBe(Object.prototype);
  });

  it('leave repeated keys and what is not an object to a full parse, and reject bad JSON', () => {
    expect(readPartialLine(Buffer.from('{"type":"user","type":"assistant"}'))).toBeUndefined();
    for (const repeated of ['{"message":{},"message":{}}', '{"toolUseResult":{},"type":"user","toolUseResult":1}', '{"ctxvm":{},"ctxvm":{}}', '{"payload":{"a":1}}', '{"toolUseResult":{"exitCode":"1"}}', '{"toolUseResult":{"exitCode":1,"exitCode":2}}']) {
      const edits = new Int32Array(EDIT_SLOTS);
      skimClaudeForTrim(Buffer.from(repeated), false, edits, 0);
      expect(partialFromEdits(Buffer.from(repeated), edits, 0, 'user'), repeated).toBeUndefined();
    }
    expect(readPartialLine(Buffer.from('[1,2]'))).toBeUndefined();
    expect(readPartialLine(Buffer.from('{"a":1} x'))).toBeUndefined();
    expect(() => readPartialLine(Buffer.from('{"message":{"role":"us\\qer"}}'))).toThrow(SyntaxError);
  });

  it('leave a line JSON.parse takes but the skimmer cannot follow (nested too deep) to a full parse', async () => {
    const deep = `${'['.repeat(600)}1${']'.repeat(600)}`;
    const text = `{"type":"user","toolUseResult":{"d":${deep}},"message":{"role":"user","content":"x"},"uuid":"u"}`;
    const file = join(root, 'deep.jsonl');
    writeFileSync(file, `${text}\n`);
    const index = await scanClaudeSession(file, { edits: true });
    expect(index.badLines).toEqual([]);
    expect(index.edits![EditSlot.Facts]! & EditFact.Whole).toBe(EditFact.Whole);
    expect(partialFromEdits(Buffer.from(text), index.edits!, 0, 'user')).toBeUndefined();
  });

  const files = [
    ...claudeMainSessions(),
    ...(generatorSkipReason()
      ? []
      : [
          generateClaudeSession(join(root, 'a.jsonl'), { turns: 30, seed: 61, compactions: 2, edgeCases: true, images: true }),
          generateClaudeSession(join(root, 'b.jsonl'), { turns: 20, seed: 62, compactions: 0, profile: 'heavy-tools' }),
        ]),
  ];
  it.skipIf(files.length === 0)('read and write every corpus and generated line as JSON.parse and JSON.stringify do', () => {
    let read = 0;
    for (const file of files) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((text, i) => {
          if (!text.trim() || !text.startsWith('{')) return;
          if (check(text, `${file}:${i + 1}`)) read++;
        });
    }
    expect(read).toBeGreaterThan(100);
  }, 120_000);
});
