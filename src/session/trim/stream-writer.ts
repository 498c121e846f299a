/**
 * The output half shared by the Claude Code and Codex trimmers: the trimmed file, the page-out
 * stream behind it, and the restore annotations that tie the two together.
 *
 * Lines are queued in order and written one step late (so a run of removed lines at the end of
 * the file can still attach to the last line). A line whose stubs or annotation name a pack whose
 * address is not known yet carries that pack's token (as many hex digits) instead; such lines
 * wait, in order, as the bytes they will be written as, with where the tokens are, until the
 * pack's address comes (packs are hashed off this thread: page-out.ts); then the addresses are
 * written over the tokens in place and the lines go out. Output is gathered and written ~1 MiB
 * at a time, so queueing a line is synchronous; callers await `sealIfDue` when `sealDue` says.
 *
 * Finishing seals the last pack, waits for every put, checks the temporary file, references the
 * objects under one holder `trim:<uuid>`, makes them durable and only then commits the file.
 */
import { randomUUID } from 'node:crypto';
import { JsonlWriter, UTF8_BOM, type RawLine } from '../../core/jsonl.js';
import { CtxvmError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import { ANNOTATION_KEY, ANNOTATION_VERSION, mayCarryAnnotation, spliceAnnotation, type TrimAnnotation } from './annotation.js';
import { foreignPart, lineDigest, PageOutSink, partJson, type LineBytes, type PageOutHandle, type PageOutOptions, type PagedPart } from './page-out.js';
import type { PackPart } from './annotation.js';
import type { PriorLine } from './compose.js';

/** What a line's annotation will say (parts still name handles, which may not be sealed yet). */
export interface AnnotationDraft {
  o?: PagedPart;
  d?: PagedPart[];
  t?: PagedPart[];
  s?: true;
}

/** A line queued for the output. */
export interface QueuedLine {
  /** The line as read (absent for lines ctxvm inserts). */
  raw?: RawLine;
  /** The parsed, possibly changed line; absent when the original bytes are written. */
  value?: Record<string, unknown>;
  /** JSON.stringify(value), when taken already (a partly read line: partial-line.ts); the annotation is appended to it. */
  json?: string;
  /** Terminator to write after the line when it is re-serialised. */
  eol: string;
  annotation?: AnnotationDraft;
  /** The pack that stubs inside `value` point into (their refs carry its token until it is sealed). */
  stubPack?: PageOutHandle;
  /**
   * The bytes restore gives back for this line when they are not `raw`'s: the original of a line
   * an earlier trim left unchanged but for its appended annotation. An unchanged line gets the
   * new annotation appended to these.
   */
  original?: LineBytes;
  /** An earlier trim's annotation of a line passed on as it was (a trailing run must compose with it). */
  prior?: PriorLine;
  /** The input line number it was read from (set by `queue`). */
  origin?: number;
}

/**
 * How a written line relates to the input: `copy` — the input line's bytes; `annotated` — those
 * bytes with a restore annotation appended (or an earlier one replaced); `serialized` — written
 * anew (changed, or inserted by ctxvm).
 */
export type WrittenKind = 'copy' | 'annotated' | 'serialized';

/**
 * One line of the output, in order, as soon as it is rendered — for observers that index the
 * output as it is written. Addresses of packs not sealed yet are still tokens in it.
 */
export interface WrittenLine {
  /** The line's bytes (a copied line's may leave out its BOM and terminator). */
  data: Buffer;
  kind: WrittenKind;
  /** The input line it came from (undefined for a line ctxvm inserted). */
  origin?: number;
}

/** Options of `TrimStreamWriter.open`. */
export interface TrimStreamWriterOptions extends Omit<PageOutOptions, 'onSealed'> {
  /** Output bytes allowed to wait for a pack before the pack is sealed early (default 8 MiB). */
  maxWaitingBytes?: number;
  /** What the file is, for error messages ("transcript", "rollout"). */
  what: string;
  /** Called with every line of the output, in order, as soon as it is rendered (see `WrittenLine`). */
  onWritten?: (line: WrittenLine) => void;
}

/** What finishing wrote. */
export interface TrimStreamResult {
  outputBytes: number;
  outputLines: number;
  /** Objects written (packs and id objects). */
  objects: number;
  /** Original bytes paged out. */
  pagedOutBytes: number;
  /** Holder id of the objects in the store. */
  holder: string;
}

/** Where a token stands in a line's bytes: the handle's address goes there once known. */
type Patch = { handle: PageOutHandle; at: number; length: number };
type Waiting = { data: Buffer; patches: Patch[] };

/** Output gathered before it is written, bytes. */
const FLUSH_BYTES = 1 << 20;


/** Every handle a line names (sealed or not), once each. */
function handlesOf(a: AnnotationDraft, stubPack: PageOutHandle | undefined): PageOutHandle[] {
  const out: PageOutHandle[] = [];
  const add = (h: PageOutHandle | undefined) => {
    if (h && !out.includes(h)) out.push(h);
  };
  for (const p of [...(a.o ? [a.o] : []), ...(a.d ?? []), ...(a.t ?? [])]) {
    add(p.pack);
    add(p.ids);
  }
  add(stubPack);
  return out;
}

/** The annotation's JSON shape (addresses, or tokens for handles not sealed yet). */
function annotationJson(a: AnnotationDraft): TrimAnnotation {
  const json: TrimAnnotation = { v: ANNOTATION_VERSION };
  if (a.o) json.o = partJson(a.o);
  if (a.d) json.d = a.d.map(partJson);
  if (a.t) json.t = a.t.map(partJson);
  if (a.s) json.s = true;
  return json;
}

/** JSON.stringify of an object whose JSON text is `json`, with `key` (not one of its keys) set to `value`. */
function withLastMember(json: string, key: string, value: unknown): string {
  return `${json.slice(0, -1)}${json.length > 2 ? ',' : ''}${JSON.stringify(key)}:${JSON.stringify(value)}}`;
}

/**
 * Where `handle`'s token stands in `data`: in full (64 hex digits, in annotations) or as the 16 a
 * stub's reference prints. Tokens are random, so they stand nowhere else.
 */
function tokenPatches(data: Buffer, handle: PageOutHandle, out: Patch[]): void {
  const head = handle.token.slice(0, 16);
  const rest = handle.token.slice(16);
  for (let at = data.indexOf(head, 0, 'latin1'); at !== -1; at = data.indexOf(head, at + 16, 'latin1')) {
    const full = data.length >= at + 64 && data.toString('latin1', at + 16, at + 64) === rest;
    out.push({ handle, at, length: full ? 64 : 16 });
  }
}

/** Writes the address over a token (the handle is sealed). */
function applyPatch(data: Buffer, p: Patch): void {
  data.write(p.handle.hash!.slice(0, p.length), p.at, 'latin1');
}

/** Output file + page-out stream of one trim. */
export class TrimStreamWriter {
  readonly #writer: JsonlWriter;
  readonly #store: ObjectStore;
  readonly #sink: PageOutSink;
  readonly #maxWaitingBytes: number;
  readonly #what: string;
  readonly #onWritten: ((line: WrittenLine) => void) | undefined;
  #run: PagedPart[] = [];
  #held: QueuedLine | undefined;
  #waiting: Waiting[] = [];
  #waitingBytes = 0;
  /** Output ready to be written, in order. */
  #gathered: Buffer[] = [];
  #gatheredBytes = 0;
  #linesOut = 0;

  private constructor(writer: JsonlWriter, store: ObjectStore, options: TrimStreamWriterOptions) {
    this.#writer = writer;
    this.#store = store;
    this.#maxWaitingBytes = options.maxWaitingBytes ?? 8 * 1024 * 1024;
    this.#what = options.what;
    this.#onWritten = options.onWritten;
    this.#sink = new PageOutSink(store, { ...options, onSealed: () => this.#drain() });
  }

  /** Opens `output` (atomically written; nothing appears until `finish`). */
  static async open(output: string, store: ObjectStore, options: TrimStreamWriterOptions): Promise<TrimStreamWriter> {
    return new TrimStreamWriter(await JsonlWriter.open(output), store, options);
  }

  /** The line queued last, not written yet (a trailing run attaches to it). */
  get held(): QueuedLine | undefined {
    return this.#held;
  }

  /**
   * Attaches a run removed after the last line to it (`t`). A line an earlier trim annotated and
   * that was passed on as it was gets its composed annotation first. Returns whether the line
   * was unannotated before (it now counts as changed).
   */
  attachTrailing(trailing: PagedPart[]): boolean {
    const last = this.#held;
    if (!last) throw new CtxvmError('E_INTERNAL', 'a trailing run without a line to attach it to');
    const wasPlain = !last.annotation;
    if (!last.annotation && last.prior) {
      const prior = last.prior;
      last.annotation = this.composeDraft(prior, undefined);
      if (prior.original) last.original = prior.original;
      else if (!last.value) {
        const value = JSON.parse(last.raw!.text) as Record<string, unknown>;
        delete value[ANNOTATION_KEY];
        last.value = value;
      }
    }
    last.annotation ??= {};
    last.annotation.t = [...(last.annotation.t ?? []), ...trailing];
    return wasPlain && !last.prior;
  }

  /** True while removed lines are being collected into a run. */
  get runOpen(): boolean {
    return this.#run.length > 0;
  }

  /** Adds a removed line to the current run (`regions`: its content ranges, when known). */
  addToRun(line: LineBytes, regions?: readonly number[] | null): void {
    this.#sink.appendTo(this.#run, line, regions);
  }

  /** Adds parts an earlier trim stored to the current run, in order. */
  addPartsToRun(parts: readonly PackPart[]): void {
    this.#sink.appendForeign(this.#run, parts.map(foreignPart));
  }

  /** Parts an earlier trim stored, held by this trim (for a kept line's annotation). */
  keepParts(parts: readonly PackPart[]): PagedPart[] {
    const out: PagedPart[] = [];
    this.#sink.appendForeign(out, parts.map(foreignPart));
    return out;
  }

  /** Adds what a removed line an earlier trim annotated stands for to the current run. */
  addPriorToRun(prior: PriorLine): void {
    const { ann } = prior;
    if (ann.d) this.addPartsToRun(ann.d);
    if (ann.o) this.addPartsToRun([ann.o]);
    else if (prior.original) this.addToRun(prior.original);
    if (ann.t) this.addPartsToRun(ann.t);
  }

  /**
   * The annotation of a kept line an earlier trim annotated: this trim's run before it, then the
   * earlier run, its original (kept, or to be stored by the caller) and its trailing run.
   */
  composeDraft(prior: PriorLine, dropped: PagedPart[] | undefined): AnnotationDraft {
    const { ann } = prior;
    const d = [...(dropped ?? []), ...this.keepParts(ann.d ?? [])];
    return {
      ...(d.length ? { d } : {}),
      ...(ann.o ? { o: this.keepParts([ann.o])[0]! } : {}),
      ...(ann.t ? { t: this.keepParts(ann.t) } : {}),
      ...(ann.s ? { s: true as const } : {}),
    };
  }

  /**
   * How a line an earlier trim annotated is written when this trim changed it or removed a run
   * before it (`keepValue` false: its bytes as they were, nothing to re-serialise). Composed with
   * the earlier annotation; a changed line whose original the earlier trim did not store gets it
   * stored now, at `at` (from `nextLocation`, taken before the transform made its stubs).
   */
  composeLine(prior: PriorLine, dropped: PagedPart[] | undefined, changed: boolean, at: { pack: PageOutHandle; location: string }): { keepValue: boolean; annotation?: AnnotationDraft; stubPack?: PageOutHandle; original?: LineBytes } {
    if (!changed && !dropped) return { keepValue: false };
    const annotation = this.composeDraft(prior, dropped);
    if (annotation.o || annotation.s) return { keepValue: true, annotation };
    if (changed) {
      annotation.o = this.storeOriginal(prior.original!, at);
      return { keepValue: true, annotation, stubPack: at.pack };
    }
    return { keepValue: false, annotation, ...(prior.original ? { original: prior.original } : {}) };
  }

  /** Ends the current run; its parts for a `d`/`t` field, or undefined when it is empty. */
  endRun(): PagedPart[] | undefined {
    if (this.#run.length === 0) return undefined;
    const run = this.#run;
    this.#run = [];
    return run;
  }

  /**
   * Where a line's original goes if `storeOriginal` is called next: its pack, and the reference
   * prefix stubs use (`<16 hex digits>#<offset>`, a token until the pack is sealed).
   */
  nextLocation(): { pack: PageOutHandle; location: string } {
    const { pack, offset } = this.#sink.next;
    return { pack, location: `${(pack.hash ?? pack.token).slice(0, 16)}#${offset}` };
  }

  /** Stores a changed line's original (`regions`: its content ranges, when known); call it right after `nextLocation`. */
  storeOriginal(raw: LineBytes, expected?: { pack: PageOutHandle; location: string }, regions?: readonly number[]): PagedPart {
    const part = this.#sink.append(raw, regions);
    if (expected && (part.pack !== expected.pack || !expected.location.endsWith(`#${part.offset}`))) {
      throw new CtxvmError('E_INTERNAL', 'a stub reference does not match where its original was stored');
    }
    return part;
  }

  /**
   * Queues a line; the one queued before it is written (or waits for its pack). The line's raw
   * bytes are copied: it is held back, possibly past the read block they are in.
   */
  queue(line: QueuedLine): void {
    if (line.raw) line.origin = line.raw.line;
    if (this.#held) this.#emit(this.#held);
    // a re-serialised line whose original is stored (or that has none) never reads its bytes
    // again: most of a live tail's bytes are such lines, and copying them is garbage
    const done = line.value !== undefined && (line.annotation?.o !== undefined || line.annotation?.s === true);
    if (done && line.raw) {
      const { raw: _raw, ...rest } = line;
      this.#held = rest;
    } else this.#held = line.raw ? { ...line, raw: line.raw.detach() } : line;
  }

  /** True when `sealIfDue` has something to do: a pack to seal, or output to write. */
  get sealDue(): boolean {
    return this.#sink.due || this.#waitingBytes > this.#maxWaitingBytes || this.#gatheredBytes >= FLUSH_BYTES;
  }

  /** Writes what output is gathered, and seals the open pack when a cut point was passed, or early when too much output waits. */
  async sealIfDue(): Promise<void> {
    if (this.#gatheredBytes >= FLUSH_BYTES) await this.#flush();
    await this.#sink.sealIfDue(this.#waitingBytes > this.#maxWaitingBytes);
  }

  /**
   * Renders the line held back: every line of the output has been seen by `onWritten` once this
   * returns, while packs may still be stored. No line may be queued after it.
   */
  endLines(): void {
    if (this.#held) this.#emit(this.#held);
    this.#held = undefined;
  }

  /**
   * Writes the held line, seals and stores everything, checks the temporary file with `check`
   * (problems make it E_INVALID), references the objects and commits the file.
   */
  async finish(check?: (tempPath: string) => Promise<string[]>): Promise<TrimStreamResult> {
    this.endLines();
    await this.#sink.finish();
    this.#drain();
    if (this.#waiting.length > 0) throw new CtxvmError('E_INTERNAL', 'trimmed lines still wait for a pack after the last one was sealed');
    await this.#flush();
    if (check) {
      await this.#writer.flush();
      const problems = await check(this.#writer.tempPath);
      if (problems.length > 0) {
        throw new CtxvmError('E_INVALID', `the trimmed ${this.#what} would be invalid, so nothing was written:\n  ${problems.slice(0, 10).join('\n  ')}`, {
          hint: 'the original is untouched; check the input with `ctxvm session validate <file>`',
        });
      }
    }
    const holder = `trim:${randomUUID()}`;
    const hashes = [...this.#sink.objects];
    await this.#store.refMany([...hashes, ...[...this.#sink.foreignObjects].filter((h) => !this.#sink.objects.has(h))], holder);
    // the objects and their references are durable before the trimmed file appears
    await this.#store.flush();
    await this.#writer.close();
    return { outputBytes: this.#writer.bytes, outputLines: this.#linesOut, objects: hashes.length, pagedOutBytes: this.#sink.bytesIn, holder };
  }

  /** Discards the output (the target is untouched) and waits for puts in flight. */
  async abort(): Promise<void> {
    await this.#writer.abort();
    await this.#sink.settle();
  }

  /** Renders a queued line and sends it on (out, or to wait for its packs' addresses). */
  #emit(p: QueuedLine): void {
    if (!p.annotation && p.raw && !p.value) {
      const raw = p.raw;
      const parts = [raw.bytes];
      if (raw.bom) parts.unshift(UTF8_BOM);
      if (raw.eol) parts.push(Buffer.from(raw.eol));
      this.#send(Buffer.concat(parts), [], 'copy', p.origin);
      return;
    }
    const draft = p.annotation ?? {};
    let text: string | undefined;
    let kind: WrittenKind = 'serialized';
    const original = p.original ?? p.raw;
    // an unchanged line keeps its bytes with the annotation appended; restore cuts it off again
    if (!p.value && original && !draft.s && !draft.o && !mayCarryAnnotation(original.bytes)) {
      const json = annotationJson(draft);
      json.h = lineDigest(original);
      const spliced = spliceAnnotation(original.bytes, original.bom, json);
      if (spliced !== undefined) {
        text = spliced + original.eol;
        kind = 'annotated';
      }
    }
    if (text === undefined) {
      // a line that has to be re-serialised keeps its original in a pack
      if (!draft.s && !draft.o && original) draft.o = this.#sink.append(original);
      if (p.json !== undefined) text = withLastMember(p.json, ANNOTATION_KEY, annotationJson(draft)) + p.eol;
      else {
        const value = p.value ?? (JSON.parse(p.original ? p.original.bytes.toString('utf8') : p.raw!.text) as Record<string, unknown>);
        value[ANNOTATION_KEY] = annotationJson(draft);
        text = JSON.stringify(value) + p.eol;
      }
    }
    this.#send(Buffer.from(text, 'utf8'), handlesOf(draft, p.stubPack), kind, p.origin);
  }

  /** Writes `data` over the tokens of `handles` that have their address, and sends it out or makes it wait. */
  #send(data: Buffer, handles: PageOutHandle[], kind: WrittenKind, origin: number | undefined): void {
    this.#onWritten?.({ data, kind, ...(origin !== undefined ? { origin } : {}) });
    const patches: Patch[] = [];
    for (const h of handles) {
      const found: Patch[] = [];
      tokenPatches(data, h, found);
      for (const p of found) {
        if (h.hash) applyPatch(data, p);
        else patches.push(p);
      }
    }
    if (patches.length === 0 && this.#waiting.length === 0) this.#out(data);
    else {
      this.#waiting.push({ data, patches });
      this.#waitingBytes += data.length;
    }
  }

  /** Gathers a line for the output file, in order. */
  #out(data: Buffer): void {
    this.#gathered.push(data);
    this.#gatheredBytes += data.length;
    this.#linesOut++;
  }

  /** Sends out, in order, every waiting line whose packs all have their address now. */
  #drain(): void {
    while (this.#waiting.length > 0) {
      const entry = this.#waiting[0]!;
      if (entry.patches.length > 0) {
        entry.patches = entry.patches.filter((p) => {
          if (!p.handle.hash) return true;
          applyPatch(entry.data, p);
          return false;
        });
        if (entry.patches.length > 0) return;
      }
      this.#waiting.shift();
      this.#waitingBytes -= entry.data.length;
      this.#out(entry.data);
    }
  }

  /** Writes the gathered output to the temporary file. */
  async #flush(): Promise<void> {
    if (this.#gatheredBytes === 0) return;
    const chunk = this.#gathered.length === 1 ? this.#gathered[0]! : Buffer.concat(this.#gathered, this.#gatheredBytes);
    this.#gathered = [];
    this.#gatheredBytes = 0;
    await this.#writer.writeRaw(chunk);
  }
}
