/**
 * Import is bounded whatever the archive claims: a gzip stream that expands like a bomb and a
 * manifest declaring more than the limit are refused with nothing imported; a member without a
 * single newline streams through (it is not held whole) and reads back byte for byte.
 */
import { createHash, randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDagEnv, type DagEnv } from '../../../test/support/dag-env.js';
import { EXPORT_MANIFEST_MEMBER, type ExportManifest } from './archive-format.js';
import { importSnapshot } from './import.js';
import { loadManifest } from './manifest.js';
import { readSnapshotFile } from './materialize.js';
import { TAR_END, tarFileHeader, tarPadding } from './tar.js';

let env: DagEnv;
beforeEach(async () => {
  env = await createDagEnv();
});
afterEach(async () => {
  await env.close();
});

const SESSION = randomUUID();
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function archiveOf(content: Buffer, manifestMember?: Buffer): Buffer {
  const manifest: ExportManifest = {
    format: 'ctxvm.export',
    version: 1,
    exportedAtMs: 0,
    snapshot: { id: 'x', name: 'big', description: null, tags: [], agent: 'claude', sessionId: SESSION, project: null, sourcePath: '/x', createdAtMs: 0 },
    files: [{ member: `files/${SESSION}.jsonl`, role: 'main', path: `${SESSION}.jsonl`, bytes: content.length, sha256: sha(content), mtimeMs: 0 }],
  };
  const m = Buffer.from(JSON.stringify(manifest));
  return Buffer.concat([
    manifestMember ?? Buffer.concat([tarFileHeader(EXPORT_MANIFEST_MEMBER, m.length, 0), m, tarPadding(m.length)]),
    tarFileHeader(`files/${SESSION}.jsonl`, content.length, 0),
    content,
    tarPadding(content.length),
    TAR_END,
  ]);
}

async function write(name: string, bytes: Buffer): Promise<string> {
  const path = join(env.root, name);
  await writeFile(path, bytes);
  return path;
}

const doImport = (archive: string, extra: Partial<Parameters<typeof importSnapshot>[0]> = {}) => importSnapshot({ catalog: env.catalog, store: env.store, archive, ...extra });

async function expectNothingImported(): Promise<void> {
  expect(await env.catalog.listSnapshots()).toEqual([]);
  expect(await env.catalog.listPendingSnapshots()).toEqual([]);
}

describe('import limits', () => {
  const zeros = Buffer.alloc(48 * 1024 * 1024);

  it('refuses a gzip stream that expands more than the ratio limit', async () => {
    const archive = await write('bomb.tar.gz', gzipSync(archiveOf(zeros), { level: 9 }));
    await expect(doImport(archive)).rejects.toMatchObject({ code: 'E_USAGE', message: expect.stringMatching(/expands more than 100:1 .*decompression bomb/) });
    await expectNothingImported();
  });

  it('refuses a manifest that declares more than the size limit', async () => {
    const content = Buffer.from('{"type":"user"}\n'.repeat(100));
    const archive = await write('declared.tar', archiveOf(content));
    await expect(doImport(archive, { maxBytes: 1000 })).rejects.toMatchObject({ code: 'E_USAGE', message: expect.stringMatching(/declares 1600 bytes .* more than the 1000/) });
    await expectNothingImported();
  });

  it('streams a member without newlines and reads it back byte for byte', async () => {
    const archive = await write('zeros.tar.gz', gzipSync(archiveOf(zeros), { level: 1 }));
    const r = await doImport(archive, { maxRatio: 10_000 });
    const manifest = await loadManifest(env.store, r.manifestHash);
    const back = createHash('sha256');
    let bytes = 0;
    for await (const piece of readSnapshotFile(env.store, manifest.files[0]!)) {
      back.update(piece);
      bytes += piece.length;
    }
    expect(bytes).toBe(zeros.length);
    expect(back.digest('hex')).toBe(sha(zeros));
  });

  it('says the manifest is a link when it is one', async () => {
    const link = tarFileHeader(EXPORT_MANIFEST_MEMBER, 0, 0);
    link.write('2', 156, 'latin1');
    link.write('/etc/passwd', 157, 'utf8');
    link.fill(0x20, 148, 156);
    let sum = 0;
    for (const b of link) sum += b;
    link.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'latin1');
    const archive = await write('link.tar', archiveOf(Buffer.from('{}\n'), link));
    await expect(doImport(archive)).rejects.toMatchObject({ message: expect.stringMatching(/ctxvm-export\.json is a symbolic link \(to "\/etc\/passwd"\), not a regular file/) });
    await expectNothingImported();
  });
});
