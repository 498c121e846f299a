/**
 * `ctxvm memory export` / `import`: a rich memory (Chinese and English turns, tasks created,
 * changed and deleted, projects, decisions, keyed and free facts) survives export → import into
 * a fresh store → export again byte for byte (but the header's exportedAt), searches the same,
 * refuses to be imported twice, and bad files are rejected naming the file and the line. The
 * same round trip runs on PostgreSQL through the library.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryStore } from '../../src/memory/memory-store.js';
import { importPortableMemory } from '../../src/memory/store/portable-import.js';
import { readPortableMemory } from '../../src/memory/store/portable-export.js';
import { createSqlMemoryStore, openMemoryStore } from '../../src/memory/store/sql-memory-store.js';
import { openWarmDatabase } from '../../src/store/warm/open.js';
import { readPortable } from '../../src/memory/portable/codec.js';
import { parseJsonlText } from '../../src/core/jsonl.js';
import { portableLines } from '../../src/memory/portable/codec.js';
import { createTurnArchive } from '../../src/memory/store/turn-archive.js';
import { createFsObjectStore } from '../../src/store/drivers/objects-fs.js';
import { createTempSchema, postgresReady } from '../support/postgres.js';
import { runCliInProcess } from '../support/run-cli.js';
import { describeWithService } from '../support/services.js';

const T0 = Date.UTC(2026, 2, 10, 1, 0);

/** Writes a memory with every kind of record and every kind of history entry for `userId`. */
async function richMemory(store: MemoryStore, userId: string): Promise<void> {
  const u = store.forUser(userId);
  await u.addTurns([
    { id: 'd1', role: 'user', speaker: 'Ann', text: '下班前把周报发给我', atMs: T0, sessionId: 's1' },
    { id: 'd2', role: 'assistant', speaker: null, text: 'OK, I will remind you.', atMs: T0 + 1000, sessionId: 's1' },
    { id: 'd3', role: 'user', speaker: null, text: 'The budget review is on Friday "at 10"\nbring notes', atMs: T0 + 2000, sessionId: null },
  ]);
  const project = await u.ensureProject('北极星', 'd1');
  const report = await u.createTask({ title: '写周报', priority: 'high', dueAtMs: T0 + 8 * 3600_000, duePhrase: '下班前', projectId: project.id, confidence: 0.9 }, 'd1');
  const review = await u.createTask({ title: 'budget review' }, 'd3');
  const gone = await u.createTask({ title: 'temporary' });
  await u.updateTask(report.id, { status: 'done' }, 'd2');
  await u.updateTask(review.id, { dueAtMs: T0 + 86_400_000, title: 'budget review (Friday)' }, 'd3');
  await u.deleteTask(gone.id);
  await u.addDecision({ text: 'Use PostgreSQL', rationale: 'scale-out', projectId: project.id, taskId: review.id }, 'd3');
  await u.addDecision({ text: '先做周报' });
  await u.setFact({ kind: 'preference', key: 'timeZone', text: 'Asia/Shanghai' }, 'd1');
  await u.setFact({ kind: 'preference', key: 'timeZone', text: 'Europe/Paris' }, 'd3');
  await u.setFact({ kind: 'fact', text: 'Ann likes green tea', importance: 0.8 });
}

const withoutExportedAt = (text: string) => text.replace(/"exportedAt":"[^"]+"/, '"exportedAt":"…"');

describe('ctxvm memory export / import', () => {
  let root: string;
  const env = (name: string) => ({ CTXVM_HOME: join(root, name), PATH: process.env.PATH ?? '' });
  const cli = (name: string, ...args: string[]) => runCliInProcess(['memory', ...args], env(name), root);

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ctxvm-portable-'));
    const store = await openMemoryStore({ db: join(root, 'a', 'ctxvm.db'), now: (() => { let t = T0; return () => (t += 1000); })() });
    await richMemory(store, 'alice');
    await store.close();
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('round-trips: export, import into a fresh store, export again is identical but for exportedAt', async () => {
    const first = await cli('a', 'export', '--user', 'alice', '-o', 'a.jsonl', '--json');
    expect(first.code).toBe(0);
    expect(first.json().records).toEqual({ turn: 3, project: 1, task: 2, decision: 2, fact: 2, history: 13 });
    const exported = await readFile(join(root, 'a.jsonl'), 'utf8');
    expect(exported.split('\n')[0]).toMatch(/^\{"format":"ctxvm-memory","version":1,"user":"alice","exportedAt":"\d{4}-.+Z"\}$/);

    const imported = await cli('b', 'import', 'a.jsonl', '--json');
    expect([imported.code, imported.stderr]).toEqual([0, '']);
    expect(imported.json()).toMatchObject({ user: 'alice', from: 'alice', records: { turn: 3, task: 2, history: 13 } });
    const again = await cli('b', 'export', '--user', 'alice');
    expect(again.code).toBe(0);
    expect(withoutExportedAt(again.stdout)).toBe(withoutExportedAt(exported));

    // Under another user id: the same records.
    expect((await cli('b', 'import', 'a.jsonl', '--user', 'bob')).code).toBe(0);
    const bob = await cli('b', 'export', '--user', 'bob');
    expect(withoutExportedAt(bob.stdout).replace('"user":"bob"', '"user":"alice"')).toBe(withoutExportedAt(exported));

    // The imported memory reads and searches like the original.
    const [a, b] = [await openMemoryStore({ db: join(root, 'a', 'ctxvm.db') }), await openMemoryStore({ db: join(root, 'b', 'ctxvm.db') })];
    try {
      for (const query of ['周报', 'budget', 'PostgreSQL', '北极星', 'green tea']) {
        expect((await b.forUser('alice').search(query)).map((h) => [h.kind, h.id]), query).toEqual((await a.forUser('alice').search(query)).map((h) => [h.kind, h.id]));
      }
      expect((await b.forUser('bob').getFactByKey('timeZone'))?.text).toBe('Europe/Paris');
      expect(await b.forUser('alice').listTasks()).toEqual(await a.forUser('alice').listTasks());
      expect((await b.forUser('alice').history()).map(({ seq: _, ...e }) => e)).toEqual((await a.forUser('alice').history()).map(({ seq: _, ...e }) => e));
      // The raw turns went to the cold archive too.
      const archive = createTurnArchive({ objects: createFsObjectStore({ root: join(root, 'b', 'objects') }), db: b.db });
      const archived: string[] = [];
      for await (const t of archive.read('alice')) archived.push(t.id);
      expect(archived).toEqual(['d1', 'd2', 'd3']);
    } finally {
      await a.close();
      await b.close();
    }
    // The tasks command of the importing store sees them (through its hot tier).
    const tasks = await cli('b', 'tasks', '--user', 'bob', '--json');
    expect(tasks.json<Array<{ title: string }>>().map((t) => t.title).sort()).toEqual(['budget review (Friday)', '写周报']);
  });

  it('refuses to import into a user that has memory, changing nothing', async () => {
    await cli('a', 'export', '--user', 'alice', '-o', 'a.jsonl');
    const twice = await cli('a', 'import', 'a.jsonl');
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('already has memory');
    const count = (await cli('a', 'tasks', '--user', 'alice', '--json')).json<unknown[]>().length;
    expect(count).toBe(2);
  });

  it('names the file and the line of bad input', async () => {
    const exported = (await readFile(join(root, 'a.jsonl'), 'utf8')).trimEnd().split('\n');
    const cases: Array<[string, string[], RegExp]> = [
      ['empty', [], /empty\.jsonl:1: empty file/],
      ['not-ours', ['{"hello":1}'], /not-ours\.jsonl:1: not a ctxvm memory export/],
      ['future', [exported[0]!.replace('"version":1', '"version":2'), ...exported.slice(1)], /future\.jsonl:1: unsupported version 2/],
      ['bad-json', [exported[0]!, exported[1]!, '{"type": "turn",'], /bad-json\.jsonl:3: /],
      ['bad-field', [exported[0]!, exported[1]!, exported[2]!.replace('"role":"assistant"', '"role":"robot"')], /bad-field\.jsonl:3: turn "role" must be/],
      ['bad-type', [exported[0]!, '{"type":"note","text":"x"}'], /bad-type\.jsonl:2: unknown record type "note"/],
      ['dup', [exported[0]!, exported[1]!, exported[1]!], /dup\.jsonl:3: turn id "d1" already appears on line 2/],
    ];
    for (const [name, lines, pattern] of cases) {
      await writeFile(join(root, `${name}.jsonl`), lines.map((l) => `${l}\n`).join(''));
      const run = await cli('c', 'import', `${name}.jsonl`, '--user', `u-${name}`);
      expect([name, run.code], run.stderr).toEqual([name, 2]);
      expect(run.stderr, name).toMatch(pattern);
    }
    // Nothing of a rejected file was written.
    expect((await cli('c', 'tasks', '--user', 'u-dup', '--json')).json()).toEqual([]);
  });

  it('compacts the cold archive from the command line (nothing to do in a fresh home)', async () => {
    const run = await cli('a', 'compact', '--json');
    expect([run.code, run.json()]).toEqual([0, []]);
    const one = await cli('a', 'compact', '--user', 'alice', '--json');
    expect(one.json()).toEqual([{ user: 'alice', segmentsBefore: 0, segmentsAfter: 0, merged: 0, conflicts: 0, released: 0 }]);
  });

  it('refuses --json without -o (the export is what stdout carries)', async () => {
    const run = await cli('a', 'export', '--user', 'alice', '--json');
    expect(run.code).toBe(2);
  });
});

describeWithService(
  'postgres',
  process.env.DATABASE_URL,
  (url) => {
    it('round-trips on PostgreSQL', async () => {
      const [from, to] = [await createTempSchema(url, 'export'), await createTempSchema(url, 'import')];
      const open = (schema: string) => openWarmDatabase({ db: url, postgres: { searchPath: schema, poolSize: 2 } });
      const [a, b] = [await open(from.name), await open(to.name)];
      try {
        await richMemory(createSqlMemoryStore(a), 'alice');
        const records = await readPortableMemory(a, 'alice');
        const text = [...portableLines('alice', records, T0)].map((l) => `${l}\n`).join('');
        const parsed = await readPortable(parseJsonlText(text, { name: 'x.jsonl' }), 'x.jsonl');
        await importPortableMemory('alice', parsed.records, { db: b });
        expect(await readPortableMemory(b, 'alice')).toEqual(records);
        expect((await createSqlMemoryStore(b).forUser('alice').search('周报')).map((h) => h.kind).sort()).toEqual(['decision', 'task', 'turn']);
      } finally {
        await a.close();
        await b.close();
        await from.drop();
        await to.drop();
      }
    });
  },
  { check: postgresReady },
);
