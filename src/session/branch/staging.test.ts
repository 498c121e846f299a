/**
 * Committing a staged branch: from the scratch folder on the same file system (link and rename),
 * and across file systems (EXDEV), where it lands in a hidden folder inside the target first.
 * The cross-file-system path runs twice: with link/rename that refuse to cross a folder boundary
 * the way the kernel refuses a device boundary (runs anywhere), and for real between /dev/shm
 * (tmpfs) and the temp folder when those are two file systems.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, statSync } from 'node:fs';
import { link, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printSkipReason } from '../../../test/support/corpus.js';
import { cleanupStaleBranchStaging, commitStaging, createStaging, STAGING_PREFIX, type CommitFs } from './staging.js';

const ID = 'c4a5c4a5-0000-4000-8000-0000000000aa';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-staging-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Stages a session file and one side file; returns what commit needs. */
async function staged(scratchDir: string) {
  const staging = await createStaging(scratchDir, ID);
  const file = staging.file('trimmed.part');
  await writeFile(file, '{"type":"user"}\n');
  await mkdir(join(staging.sideDir, 'subagents'), { recursive: true });
  await writeFile(join(staging.sideDir, 'subagents', 'agent-1.jsonl'), '{"type":"assistant"}\n');
  return { staging, file };
}

const exdev = (call: string, a: string, b: string) => Object.assign(new Error(`EXDEV: cross-device ${call} '${a}' -> '${b}'`), { code: 'EXDEV' });

/** link/rename that fail with EXDEV when source and destination lie on two sides of `boundary`. */
function crossDeviceAt(boundary: string): CommitFs & { crossings: number } {
  const inside = (p: string) => p.startsWith(boundary + '/');
  const fs = {
    crossings: 0,
    async link(a: string, b: string) {
      if (inside(a) !== inside(b)) {
        fs.crossings++;
        throw exdev('link', a, b);
      }
      await link(a, b);
    },
    async rename(a: string, b: string) {
      if (inside(a) !== inside(b)) {
        fs.crossings++;
        throw exdev('rename', a, b);
      }
      await rename(a, b);
    },
  };
  return fs;
}

/** The real link/rename, counting the EXDEV refusals they meet. */
function countingCrossings(): CommitFs & { crossings: number } {
  const fs = {
    crossings: 0,
    link: (a: string, b: string) => counted(link(a, b)),
    rename: (a: string, b: string) => counted(rename(a, b)),
  };
  const counted = async (call: Promise<void>) => {
    try {
      await call;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EXDEV') fs.crossings++;
      throw error;
    }
  };
  return fs;
}

async function expectCommitted(targetDir: string) {
  expect((await readdir(targetDir)).sort()).toEqual([ID, `${ID}.jsonl`]);
  expect(await readFile(join(targetDir, `${ID}.jsonl`), 'utf8')).toBe('{"type":"user"}\n');
  expect(await readFile(join(targetDir, ID, 'subagents', 'agent-1.jsonl'), 'utf8')).toBe('{"type":"assistant"}\n');
}

describe('staging', () => {
  it('stages under the scratch folder, named with the pid, never in the target', async () => {
    const scratch = join(dir, 'ctxvm', 'tmp');
    const { staging } = await staged(scratch);
    expect(staging.dir.startsWith(scratch + '/')).toBe(true);
    expect(staging.dir).toMatch(new RegExp(`/staging-${process.pid}-[A-Za-z0-9]+$`));
    expect(existsSync(join(dir, 'agent'))).toBe(false);
  });

  it('commits by link and rename on one file system', async () => {
    const scratch = join(dir, 'ctxvm', 'tmp');
    const targetDir = join(dir, 'agent');
    const { staging, file } = await staged(scratch);
    const fs = crossDeviceAt(join(dir, 'elsewhere'));
    await commitStaging(staging, file, join(targetDir, `${ID}.jsonl`), join(targetDir, ID), targetDir, fs);
    expect(fs.crossings).toBe(0);
    await expectCommitted(targetDir);
  });

  it('across file systems, copies into a hidden folder in the target and commits from there', async () => {
    const scratch = join(dir, 'ctxvm', 'tmp');
    const targetDir = join(dir, 'agent');
    const { staging, file } = await staged(scratch);
    const fs = crossDeviceAt(scratch);
    await commitStaging(staging, file, join(targetDir, `${ID}.jsonl`), join(targetDir, ID), targetDir, fs);
    expect(fs.crossings).toBeGreaterThan(0);
    // the landing folder is gone; only the branch is there
    await expectCommitted(targetDir);
  });

  it('across file systems, refuses to replace a session and leaves nothing behind', async () => {
    const scratch = join(dir, 'ctxvm', 'tmp');
    const targetDir = join(dir, 'agent');
    await mkdir(targetDir, { recursive: true });
    await writeFile(join(targetDir, `${ID}.jsonl`), 'theirs\n');
    const { staging, file } = await staged(scratch);
    await expect(commitStaging(staging, file, join(targetDir, `${ID}.jsonl`), join(targetDir, ID), targetDir, crossDeviceAt(scratch))).rejects.toMatchObject({ code: 'E_EXISTS' });
    expect(await readdir(targetDir)).toEqual([`${ID}.jsonl`]);
    expect(await readFile(join(targetDir, `${ID}.jsonl`), 'utf8')).toBe('theirs\n');
  });

  it('across file systems, a failing last step undoes the side folder and removes the landing folder', async () => {
    const scratch = join(dir, 'ctxvm', 'tmp');
    const targetDir = join(dir, 'agent');
    const { staging, file } = await staged(scratch);
    const crossing = crossDeviceAt(scratch);
    const failingLink: CommitFs = {
      rename: (a, b) => crossing.rename(a, b),
      async link(a, b) {
        if (a.startsWith(targetDir + '/')) throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
        await crossing.link(a, b);
      },
    };
    await expect(commitStaging(staging, file, join(targetDir, `${ID}.jsonl`), join(targetDir, ID), targetDir, failingLink)).rejects.toMatchObject({ code: 'E_IO' });
    expect(await readdir(targetDir)).toEqual([]);
  });

  it('gc of an agent folder removes landing folders (and older staging) of dead processes only', async () => {
    const live = join(dir, `${STAGING_PREFIX}${ID}.${process.pid}`);
    const dead = join(dir, `${STAGING_PREFIX}${ID}.999999999`);
    await mkdir(live);
    await mkdir(dead);
    expect(await cleanupStaleBranchStaging(dir, 60 * 60_000, Date.now(), (pid) => pid === process.pid)).toBe(1);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(dead)).toBe(false);
  });
});

// A real second file system: /dev/shm is tmpfs on Linux.
const SHM = '/dev/shm';
const twoFileSystems = existsSync(SHM) && statSync(SHM).dev !== statSync(tmpdir()).dev;
const noSecondFs = twoFileSystems ? undefined : `${SHM} and ${tmpdir()} are not two file systems here: the real EXDEV commit is not tried (the simulated one above is)`;
printSkipReason(noSecondFs);

describe.skipIf(!!noSecondFs)('staging on another file system (real EXDEV)', () => {
  it('commits a branch staged on tmpfs into the temp folder', async () => {
    const scratch = await mkdtemp(join(SHM, 'ctxvm-staging-'));
    try {
      const targetDir = join(dir, 'agent');
      const { staging, file } = await staged(scratch);
      const fs = countingCrossings();
      await commitStaging(staging, file, join(targetDir, `${ID}.jsonl`), join(targetDir, ID), targetDir, fs);
      expect(fs.crossings).toBeGreaterThan(0);
      await expectCommitted(targetDir);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
