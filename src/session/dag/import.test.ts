import { createHash, randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDagEnv, type DagEnv } from '../../../test/support/dag-env.js';
import { EXPORT_MANIFEST_MEMBER, type ExportManifest } from './archive-format.js';
import { exportSnapshot } from './export.js';
import { importSnapshot, remapCwdInLine } from './import.js';
import { createSnapshot } from './snapshot.js';
import { TAR_BLOCK, TAR_END, tarFileHeader, tarPadding } from './tar.js';

let env: DagEnv;
beforeEach(async () => {
  env = await createDagEnv();
});
afterEach(async () => {
  await env.close();
});

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const SESSION = randomUUID();
const LINES = [
  { type: 'user', cwd: '/home/a/proj', sessionId: SESSION, uuid: randomUUID(), message: { role: 'user', content: 'hi' } },
  { type: 'assistant', cwd: '/home/a/proj/sub', sessionId: SESSION, uuid: randomUUID(), message: { role: 'assistant', content: 'the cwd is "/home/a/proj"' } },
  { type: 'user', cwd: '/home/a/project2', sessionId: SESSION, uuid: randomUUID(), message: { role: 'user', content: 'x' } },
];
const CONTENT = LINES.map((l) => JSON.stringify(l)).join('\n') + '\n';

function manifestFor(files: { path: string; content: Buffer; role?: string }[], overrides: Partial<ExportManifest['snapshot']> = {}): ExportManifest {
  return {
    format: 'ctxvm.export',
    version: 1,
    exportedAtMs: 0,
    snapshot: { id: 'x', name: 'evil', description: null, tags: [], agent: 'claude', sessionId: SESSION, project: '/home/a/proj', sourcePath: '/x', createdAtMs: 0, ...overrides },
    files: files.map((f, i) => ({ member: `files/${f.path}`, role: (f.role ?? (i === 0 ? 'main' : 'subagent')) as 'main', path: f.path, bytes: f.content.length, sha256: sha(f.content), mtimeMs: 0 })),
  };
}

/** A raw tar header with any type flag and name (what a hostile archive can contain). */
function rawHeader(name: string, size: number, type: string, link = ''): Buffer {
  const h = tarFileHeader('placeholder', size, 0);
  h.fill(0, 0, 100);
  h.write(name, 0, 'utf8');
  h.write(type, 156, 'latin1');
  h.write(link, 157, 'utf8');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'latin1');
  return h;
}

function member(name: string, content: Buffer, type = '0'): Buffer {
  return Buffer.concat([rawHeader(name, type === '0' ? content.length : 0, type, type === '0' ? '' : content.toString()), type === '0' ? Buffer.concat([content, tarPadding(content.length)]) : Buffer.alloc(0)]);
}

async function writeArchive(parts: Buffer[], name = 'a.tar'): Promise<string> {
  const path = join(env.root, name);
  await writeFile(path, Buffer.concat([...parts, TAR_END]));
  return path;
}

const manifestMember = (m: ExportManifest) => member(EXPORT_MANIFEST_MEMBER, Buffer.from(JSON.stringify(m)));
const doImport = (archive: string, extra: Partial<Parameters<typeof importSnapshot>[0]> = {}) => importSnapshot({ catalog: env.catalog, store: env.store, archive, ...extra });

describe('export / import', () => {
  it('round-trips, and the archive opens as a plain tar', async () => {
    const main = await env.putClaudeSession('/home/a/proj', SESSION, CONTENT);
    await createSnapshot({ catalog: env.catalog, store: env.store, source: { agent: 'claude', sessionId: SESSION, path: main, project: '/home/a/proj' }, name: 's', tags: ['t'] });
    const out = join(env.root, 's.tar');
    const r = await exportSnapshot({ catalog: env.catalog, store: env.store, ref: 's', output: out });
    const bytes = await readFile(out);
    expect(r.sha256).toBe(sha(bytes));
    expect(bytes.subarray(0, 17).toString()).toBe(EXPORT_MANIFEST_MEMBER);
    expect(bytes.includes(Buffer.from(CONTENT))).toBe(true);
    const imported = await doImport(out, { name: 's2' });
    expect(imported.record).toMatchObject({ origin: 'import', sessionId: SESSION, project: '/home/a/proj', tags: ['t'] });
    expect(imported.newObjects).toBe(1);
  });

  it('remaps cwd fields naming the project or a folder inside it, and nothing else', () => {
    const line = Buffer.from(JSON.stringify(LINES[1]));
    expect(JSON.parse(remapCwdInLine(line, '/home/a/proj', '/srv/new').toString())).toMatchObject({ cwd: '/srv/new/sub', message: { content: 'the cwd is "/home/a/proj"' } });
    const other = Buffer.from(JSON.stringify(LINES[2]));
    expect(remapCwdInLine(other, '/home/a/proj', '/srv/new')).toBe(other);
    const win = Buffer.from(JSON.stringify({ payload: { cwd: 'c:\\Users\\me\\proj\\sub' } }));
    expect(JSON.parse(remapCwdInLine(win, 'c:\\Users\\me\\proj', '/home/me/proj').toString()).payload.cwd).toBe('/home/me/proj\\sub');
    expect(remapCwdInLine(Buffer.from('{"cwd": "/home/a/proj"}'), '/home/a/proj', '/ünï cøde').toString()).toBe('{"cwd": "/ünï cøde"}');
  });

  describe('rejects hostile archives and imports nothing', () => {
    const content = Buffer.from(CONTENT);
    const good = () => manifestFor([{ path: `${SESSION}.jsonl`, content }]);
    const cases: [string, () => Buffer[], RegExp][] = [
      ['path traversal', () => [manifestMember(good()), member(`files/../../${SESSION}.jsonl`, content)], /climbs out/],
      ['an absolute path', () => [manifestMember(good()), member(`/etc/${SESSION}.jsonl`, content)], /absolute path/],
      ['a symlink', () => [manifestMember(good()), member(`files/${SESSION}.jsonl`, Buffer.from('/etc/passwd'), '2')], /symbolic link/],
      ['a hard link', () => [manifestMember(good()), member(`files/${SESSION}.jsonl`, Buffer.from('files/x'), '1')], /hard link/],
      ['a device', () => [manifestMember(good()), member(`files/${SESSION}.jsonl`, Buffer.alloc(0), '3')], /character device/],
      ['a member the manifest does not list', () => [manifestMember(good()), member(`files/${SESSION}.jsonl`, content), member('files/extra.jsonl', content)], /not listed/],
      ['a manifest path with ..', () => [manifestMember(manifestFor([{ path: `../${SESSION}.jsonl`, content }]))], /not a safe relative path/],
      ['a member larger than listed', () => [manifestMember(good()), member(`files/${SESSION}.jsonl`, Buffer.concat([content, Buffer.from('{}\n')]))], /bytes, the manifest says/],
      ['no manifest first', () => [member(`files/${SESSION}.jsonl`, content)], /first member must be/],
    ];
    for (const [what, parts, message] of cases) {
      it(what, async () => {
        const archive = await writeArchive(parts());
        await expect(doImport(archive)).rejects.toMatchObject({ code: 'E_USAGE', message: expect.stringMatching(message) });
        expect(await env.catalog.listSnapshots()).toEqual([]);
        expect(await env.catalog.listPendingSnapshots()).toEqual([]);
      });
    }

    it('a checksum mismatch, a missing member, a truncated or corrupt archive', async () => {
      const tampered = Buffer.from(content);
      tampered[10] = 0x41;
      const bad = [
        await writeArchive([manifestMember(good()), member(`files/${SESSION}.jsonl`, tampered)], 'sum.tar'),
        await writeArchive([manifestMember(manifestFor([{ path: `${SESSION}.jsonl`, content }, { path: 'agent-1.jsonl', content }])), member(`files/${SESSION}.jsonl`, content)], 'missing.tar'),
      ];
      for (const archive of bad) await expect(doImport(archive)).rejects.toMatchObject({ code: 'E_INTEGRITY' });
      const whole = Buffer.concat([manifestMember(good()), member(`files/${SESSION}.jsonl`, content), TAR_END]);
      const truncated = join(env.root, 'trunc.tar');
      await writeFile(truncated, whole.subarray(0, TAR_BLOCK * 3 + 100));
      await expect(doImport(truncated)).rejects.toMatchObject({ code: 'E_INTEGRITY' });
      const gz = gzipSync(whole);
      gz.writeUInt8(gz.readUInt8(gz.length - 20) ^ 0xff, gz.length - 20);
      const corrupt = join(env.root, 'corrupt.tar.gz');
      await writeFile(corrupt, gz);
      await expect(doImport(corrupt)).rejects.toMatchObject({ code: 'E_INTEGRITY' });
      const notTar = join(env.root, 'not.tar');
      await writeFile(notTar, Buffer.alloc(2048, 0x41));
      await expect(doImport(notTar)).rejects.toMatchObject({ code: 'E_INTEGRITY' });
      expect(await env.catalog.listSnapshots()).toEqual([]);
      // a valid gzip archive of the same content imports
      const ok = join(env.root, 'ok.tgz');
      await writeFile(ok, gzipSync(whole));
      await expect(doImport(ok)).resolves.toMatchObject({ name: 'evil' });
    });
  });
});
