/**
 * Undo a trim: rebuild the original transcript byte for byte from the trimmed file and the object
 * store. Lines the agent appended after the trim (no annotation) are kept as they are, after the
 * restored original. Restoring a twice-trimmed file undoes the last trim. Both annotation
 * versions are understood (see annotation.ts).
 */
import { readLines, JsonlWriter } from '../../core/jsonl.js';
import { CtxvmError, NotFoundError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import { mayCarryAnnotation, readAnnotation, runHashes, unspliceAnnotation, type PackPart } from './annotation.js';
import { PackReader } from './pack-reader.js';

export interface RestoreOptions {
  /** The trimmed transcript. */
  input: string;
  /** Where the original goes (written atomically; must differ from `input`). */
  output: string;
  store: ObjectStore;
  signal?: AbortSignal;
}

export interface RestoreResult {
  /** Lines of the restored file. */
  lines: number;
  bytes: number;
  /** Lines whose original came back from the store. */
  restoredLines: number;
  /** Synthetic lines ctxvm had inserted and restore dropped. */
  droppedSynthetic: number;
  /** True when the input carried no ctxvm annotation at all (the output is a plain copy). */
  wasTrimmed: boolean;
}

export async function restoreSession(options: RestoreOptions): Promise<RestoreResult> {
  const { input, output, store } = options;
  if (input === output) throw new CtxvmError('E_USAGE', `refusing to overwrite ${input}`, { hint: 'pass a different -o path' });
  const writer = await JsonlWriter.open(output);
  const packs = new PackReader(store, input);
  // lines of the output, counted by their terminators (originals come back in multi-line pieces)
  let lines = 0;
  let endsWithNewline = true;
  const count = (chunk: Uint8Array) => {
    if (chunk.length === 0) return;
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) lines++;
    endsWithNewline = chunk[chunk.length - 1] === 0x0a;
  };
  const write = async (chunk: Buffer) => {
    count(chunk);
    await writer.writeRaw(chunk);
  };
  let restoredLines = 0;
  let droppedSynthetic = 0;
  let annotated = 0;
  // version 1: one object per original line or run, streamed whole
  const copyObject = async (hash: string, line: number) => {
    if (!(await store.has(hash))) {
      throw new NotFoundError(`${input}:${line}: object ${hash} is not in the store`, {
        hint: 'restore needs the CTXVM_HOME the trim was made with; objects are kept while the trim holds them (check `ctxvm gc` was not forced)',
      });
    }
    for await (const chunk of store.getStream(hash)) await write(chunk as Buffer);
  };
  const copyParts = async (parts: PackPart[]) => {
    for (const part of parts) await write(await packs.read(part));
  };
  try {
    for await (const raw of readLines(input, { signal: options.signal })) {
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
      if (!ann) {
        await copy();
        continue;
      }
      annotated++;
      if (ann.v === 1) for (const h of runHashes(ann.d)) await copyObject(h, raw.line);
      else await copyParts(ann.d ?? []);
      if (ann.s) droppedSynthetic++;
      else if (ann.a) {
        const original = unspliceAnnotation(raw.text, ann);
        if (original === undefined) throw new CtxvmError('E_PARSE', `${input}:${raw.line}: the appended ctxvm annotation is not at the end of the line`, { hint: 'the trimmed file was edited by hand' });
        await write(Buffer.from(original + raw.eol));
        restoredLines++;
      } else if (ann.o) {
        if (ann.v === 1) await copyObject(ann.o, raw.line);
        else await copyParts([ann.o]);
        restoredLines++;
      } else {
        throw new CtxvmError('E_PARSE', `${input}:${raw.line}: ctxvm annotation names no original line`, { hint: 'the trimmed file was edited by hand' });
      }
      if (ann.v === 1) for (const h of runHashes(ann.t)) await copyObject(h, raw.line);
      else await copyParts(ann.t ?? []);
    }
    await writer.close();
  } catch (error) {
    await writer.abort();
    throw error;
  }
  return { lines: lines + (endsWithNewline ? 0 : 1), bytes: writer.bytes, restoredLines, droppedSynthetic, wasTrimmed: annotated > 0 };
}
