/**
 * Undo a trim: rebuild the original transcript byte for byte from the trimmed file and the object
 * store. Lines the agent appended after the trim (no annotation) are kept as they are, after the
 * restored original. Every part is checked against the digest the trim recorded; a mismatch
 * refuses the restore (nothing is written) and names the line. A file trimmed several times
 * comes back in one go: this build composes annotations, and files whose earlier trims nested
 * them (builds before annotation version 3) are restored level by level until none is left.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { readLines, JsonlWriter } from '../../core/jsonl.js';
import { CtxvmError, NotFoundError, ParseError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import { DIGEST_HEX, isPageInOnly, mayCarryAnnotation, readAnnotation, runHashes, unspliceAnnotation, type PackPart } from './annotation.js';
import { PackReader } from './pack-reader.js';

export interface RestoreOptions {
  /** The trimmed transcript. */
  input: string;
  /** Where the original goes (written atomically; must differ from `input`). */
  output: string;
  store: ObjectStore;
  signal?: AbortSignal;
  /** Copy a file that carries no ctxvm annotation instead of refusing it (default false). */
  allowUntrimmed?: boolean;
  /** Folder for the intermediate files of nested levels (default: the system's temp folder). */
  scratchDir?: string;
}

export interface RestoreResult {
  /** Lines of the restored file. */
  lines: number;
  bytes: number;
  /** Lines whose original came back from the store. */
  restoredLines: number;
  /** Synthetic lines ctxvm had inserted and restore dropped. */
  droppedSynthetic: number;
  /** True when the input carried a ctxvm annotation (false only with `allowUntrimmed`). */
  wasTrimmed: boolean;
  /** Nested trim levels undone (1 for a file trimmed by this build, however often). */
  levels: number;
  /** Parts and lines restored without a digest to check them by (trims before annotation version 3). */
  unverified: number;
}

/** Most nested levels undone before restore gives up (a file cannot nest deeper by accident). */
const MAX_LEVELS = 64;

interface PassResult extends Omit<RestoreResult, 'levels' | 'unverified' | 'wasTrimmed'> {
  annotated: number;
  unverified: number;
  /** The output still holds ctxvm annotations: an earlier trim's, nested inside this one's. */
  nested: boolean;
}

const NESTED_MARK = Buffer.from('"ctxvm":{"v":');

async function restoreOnce(input: string, output: string, store: ObjectStore, signal: AbortSignal | undefined, packs: PackReader): Promise<PassResult> {
  const writer = await JsonlWriter.open(output);
  // lines of the output, counted by their terminators (originals come back in multi-line pieces)
  let lines = 0;
  let endsWithNewline = true;
  let nested = false;
  const count = (chunk: Uint8Array) => {
    if (chunk.length === 0) return;
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) lines++;
    endsWithNewline = chunk[chunk.length - 1] === 0x0a;
  };
  const write = async (chunk: Buffer) => {
    count(chunk);
    if (!nested && chunk.includes(NESTED_MARK)) nested = true;
    await writer.writeRaw(chunk);
  };
  let restoredLines = 0;
  let droppedSynthetic = 0;
  let annotated = 0;
  let unverified = 0;
  let where = '';
  // version 1: one object per original line or run, streamed whole
  const copyObject = async (hash: string) => {
    if (!(await store.has(hash))) {
      throw new NotFoundError(`${where}: object ${hash} is not in the store`, {
        hint: 'restore needs the CTXVM_HOME the trim was made with; objects are kept while the trim holds them (check `ctxvm gc` was not forced)',
      });
    }
    unverified++;
    for await (const chunk of store.getStream(hash)) await write(chunk as Buffer);
  };
  const copyParts = async (parts: PackPart[]) => {
    for (const part of parts) {
      let got: { bytes: Buffer; verified: boolean };
      try {
        got = await packs.readChecked(part);
      } catch (cause) {
        if (CtxvmError.is(cause) && cause.code === 'E_INTEGRITY') {
          throw new CtxvmError('E_PARSE', `${where}: the ctxvm annotation does not restore what the trim stored: ${cause.message}`, {
            cause,
            hint: 'the annotation was edited or the store is damaged; nothing was written — restore from an untouched copy of the trimmed file',
          });
        }
        throw cause;
      }
      if (!got.verified) unverified++;
      await write(got.bytes);
    }
  };
  try {
    for await (const raw of readLines(input, { signal })) {
      const copy = async () => {
        lines++;
        endsWithNewline = raw.eol !== '';
        await writer.writeLine(raw);
      };
      if (!mayCarryAnnotation(raw.bytes)) {
        await copy();
        continue;
      }
      let value: unknown;
      try {
        value = JSON.parse(raw.text);
      } catch {
        await copy();
        continue;
      }
      const ann = readAnnotation(value, { file: input, line: raw.line, byteOffset: raw.byteOffset });
      // a branch's page-in pointer restores nothing: the line is the branch's own
      if (!ann || isPageInOnly(ann)) {
        await copy();
        continue;
      }
      where = `${input}:${raw.line}`;
      annotated++;
      if (ann.v === 1) for (const h of runHashes(ann.d)) await copyObject(h);
      else await copyParts(ann.d ?? []);
      if (ann.s) droppedSynthetic++;
      else if (ann.a) {
        const original = unspliceAnnotation(raw.text, ann);
        if (original === undefined) throw new ParseError({ file: input, line: raw.line, byteOffset: raw.byteOffset }, 'the appended ctxvm annotation is not at the end of the line', { hint: 'the trimmed file was edited by hand' });
        const bytes = Buffer.from(original + raw.eol);
        if (ann.v !== 1 && ann.h !== undefined) {
          const got = createHash('sha256').update(bytes).digest('hex').slice(0, DIGEST_HEX);
          if (got !== ann.h) {
            throw new ParseError({ file: input, line: raw.line, byteOffset: raw.byteOffset }, `the line differs from the original the trim recorded (digest ${got}, expected ${ann.h})`, {
              hint: 'the line was edited after the trim; nothing was written',
            });
          }
        } else unverified++;
        await write(bytes);
        restoredLines++;
      } else if (ann.o) {
        if (ann.v === 1) await copyObject(ann.o);
        else await copyParts([ann.o]);
        restoredLines++;
      } else {
        throw new ParseError({ file: input, line: raw.line, byteOffset: raw.byteOffset }, 'ctxvm annotation names no original line', { hint: 'the trimmed file was edited by hand' });
      }
      if (ann.v === 1) for (const h of runHashes(ann.t)) await copyObject(h);
      else await copyParts(ann.t ?? []);
    }
    await writer.close();
  } catch (error) {
    await writer.abort();
    throw error;
  }
  return { lines: lines + (endsWithNewline ? 0 : 1), bytes: writer.bytes, restoredLines, droppedSynthetic, annotated, unverified, nested };
}

export async function restoreSession(options: RestoreOptions): Promise<RestoreResult> {
  const { input, output, store } = options;
  if (input === output) throw new CtxvmError('E_USAGE', `refusing to overwrite ${input}`, { hint: 'pass a different -o path' });
  const packs = new PackReader(store, input);
  // each level goes to a scratch file; the output is written once, from the last
  const base = options.scratchDir ?? tmpdir();
  await mkdir(base, { recursive: true });
  const scratch = await mkdtemp(join(base, 'ctxvm-restore-'));
  try {
    let from = input;
    let total: RestoreResult | undefined;
    for (let level = 1; level <= MAX_LEVELS; level++) {
      const to = join(scratch, `level-${level}.jsonl`);
      const pass = await restoreOnce(from, to, store, options.signal, packs);
      if (level === 1 && pass.annotated === 0 && !options.allowUntrimmed) {
        throw new CtxvmError('E_USAGE', `${input}: no ctxvm annotation in the file, so there is no trim to undo`, {
          hint: 'restore takes a file written by `ctxvm session trim` (or a branch made with trimming); the original is the file you trimmed',
        });
      }
      total = total
        ? { ...pass, levels: level, wasTrimmed: true, restoredLines: total.restoredLines + pass.restoredLines, droppedSynthetic: total.droppedSynthetic + pass.droppedSynthetic, unverified: total.unverified + pass.unverified }
        : { lines: pass.lines, bytes: pass.bytes, restoredLines: pass.restoredLines, droppedSynthetic: pass.droppedSynthetic, wasTrimmed: pass.annotated > 0, levels: pass.annotated > 0 ? 1 : 0, unverified: pass.unverified };
      from = to;
      if (!pass.nested) break;
      if (level === MAX_LEVELS) throw new CtxvmError('E_PARSE', `${input}: ctxvm annotations nest more than ${MAX_LEVELS} levels deep`, { hint: 'the file was edited by hand' });
    }
    const writer = await JsonlWriter.open(output);
    try {
      for await (const raw of readLines(from, { signal: options.signal })) await writer.writeLine(raw);
      await writer.close();
    } catch (error) {
      await writer.abort();
      throw error;
    }
    return total!;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
