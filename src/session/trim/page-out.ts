/**
 * Where the trimmer pages out to: original lines are lifted (lift.ts) and appended to a *pack*,
 * a ~1 MiB object holding many lines; the UUIDs lifted out go to a per-trim *id object*. A pack
 * is cut after a line, at a point chosen by that line's content (a hash of its lifted tail,
 * weighted by its length) once the pack has its minimum size, so two trims paging out the same
 * lines — a branch and its sibling, say — cut at the same places and store the same packs.
 *
 * One object per pack instead of per line keeps object count, file writes and compression calls
 * low (brotli is also much better on 1 MiB than on a line). Compression is a third of a trim's
 * CPU, so packs use the codec's fastest level (`PutOptions.effort`: brotli 0, measured 20% less
 * time for 7% more bytes). A pack is hashed and compressed on the store's encoder thread
 * (`PutOptions.offThread`; the thread pool cost ~40 MB more RSS, its every thread keeping an
 * allocator arena of its own), one at a time, while the trim fills the next; pack allocations are
 * reused, so memory stays flat whatever the input size. A pack's address is known only when it is
 * sealed: until then its `PageOutHandle` carries a random token that output already written uses
 * as a placeholder (see stream-writer.ts).
 */
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { ByteBuffer } from '../../core/byte-buffer.js';
import { fnv1a } from '../../core/fnv.js';
import { sha256Hex } from '../../core/hash.js';
import type { ObjectStore } from '../../store/object-store.js';
import { DIGEST_HEX, partDigest, partIds, type PackPart } from './annotation.js';
import { encodeIdObject, type IdSource } from './id-object.js';
import { liftLineInto } from './lift.js';

/** A pack or id object being filled (no `hash` yet) or sealed. */
export interface PageOutHandle {
  /** 64 random hex digits standing in for the address until the object is sealed. */
  readonly token: string;
  /** The object's address once sealed. */
  hash?: string;
}

/** Where some original bytes went: a range of a pack, and of an id object when UUIDs were lifted. */
export interface PagedPart {
  pack: PageOutHandle;
  offset: number;
  length: number;
  ids?: PageOutHandle;
  idOffset: number;
  idLength: number;
  /** SHA-256 of the original bytes while the part grows; folded into `digest` when it is written. */
  hasher?: Hash;
  /** First hex digits of the SHA-256 of the original bytes (absent for parts of version 2 trims). */
  digest?: string;
}

/** A part an earlier trim stored (its objects sealed long ago), as a part of this one. */
export function foreignPart(p: PackPart): PagedPart {
  const ids = partIds(p);
  const digest = partDigest(p);
  return {
    pack: { token: p[0], hash: p[0] },
    offset: p[1],
    length: p[2],
    ...(ids ? { ids: { token: ids.hash, hash: ids.hash } } : {}),
    idOffset: ids?.offset ?? 0,
    idLength: ids?.length ?? 0,
    ...(digest ? { digest } : {}),
  };
}

/** The digest of one line's original bytes (BOM and terminator included), as annotations keep it. */
export function lineDigest(line: LineBytes): string {
  const h = createHash('sha256');
  hashLine(h, line);
  return h.digest('hex').slice(0, DIGEST_HEX);
}

function hashLine(h: Hash, line: LineBytes): void {
  if (line.bom) h.update(BOM);
  h.update(line.bytes);
  if (line.eol) h.update(line.eol);
}
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The bytes of one physical line as read (a RawLine is one). */
export interface LineBytes {
  readonly bytes: Buffer;
  readonly bom: boolean;
  readonly eol: string;
}

/** Options of `PageOutSink`. */
export interface PageOutOptions {
  /** A pack is never cut before it holds this many bytes (default 256 KiB). */
  minPackBytes?: number;
  /** Mean bytes between cuts after the minimum (default 768 KiB, so packs average ~1 MiB). */
  cutGapBytes?: number;
  /** A pack is cut after the line that takes it past this many bytes (default 4 MiB). */
  maxPackBytes?: number;
  /** The id object is sealed with a pack once it holds this many bytes (default 256 KiB). */
  minIdBytes?: number;
  /**
   * Stores in flight at once (default 3); the store hashes and compresses them one at a time on its
   * encoder thread. Measured at 100 MiB: 1 holds 5–9 MB less but made a 500 MiB live tail 10–15%
   * slower; 2 fell between, within the runs' noise.
   */
  maxInFlight?: number;
  /** Called after each object is sealed (its handle's `hash` set) and stored. */
  onSealed?: () => void | Promise<void>;
  /** How the lines' uuids derive from a source's, if they do (id objects then name them by it; id-object.ts). */
  idSource?: IdSource;
}

function newHandle(): PageOutHandle {
  return { token: randomBytes(32).toString('hex') };
}

/** The JSON form of a part for an annotation: addresses, or tokens for objects not sealed yet. */
export function partJson(p: PagedPart): PackPart {
  if (p.hasher) {
    p.digest = p.hasher.digest('hex').slice(0, DIGEST_HEX);
    delete p.hasher;
  }
  const pack = p.pack.hash ?? p.pack.token;
  if (!p.ids || p.idLength === 0) return p.digest ? [pack, p.offset, p.length, p.digest] : [pack, p.offset, p.length];
  const ids = p.ids.hash ?? p.ids.token;
  return p.digest ? [pack, p.offset, p.length, ids, p.idOffset, p.idLength, p.digest] : [pack, p.offset, p.length, ids, p.idOffset, p.idLength];
}

/** The page-out stream of one trim. */
export class PageOutSink {
  readonly #store: ObjectStore;
  readonly #min: number;
  readonly #gap: number;
  readonly #max: number;
  readonly #minIds: number;
  readonly #maxInFlight: number;
  readonly #onSealed: (() => void | Promise<void>) | undefined;
  readonly #idSource: IdSource | undefined;
  #text: ByteBuffer;
  #ids: ByteBuffer;
  /** Capacity of a pack's allocation, bytes; allocations of sealed packs are reused once stored. */
  readonly #packCapacity: number;
  readonly #spare: Buffer[] = [];
  #pack = newHandle();
  #idHandle = newHandle();
  #due = false;
  readonly #inFlight = new Set<Promise<void>>();
  #failure: unknown;
  readonly #objects = new Set<string>();
  readonly #foreign = new Set<string>();
  #bytesIn = 0;

  constructor(store: ObjectStore, options: PageOutOptions = {}) {
    this.#store = store;
    this.#min = options.minPackBytes ?? 256 * 1024;
    this.#gap = options.cutGapBytes ?? 768 * 1024;
    this.#max = options.maxPackBytes ?? 4 * 1024 * 1024;
    this.#minIds = options.minIdBytes ?? 256 * 1024;
    this.#maxInFlight = Math.max(1, options.maxInFlight ?? 3);
    this.#onSealed = options.onSealed;
    this.#idSource = options.idSource;
    // room for the largest pack but a giant line: allocations are reused, so most packs never grow
    this.#packCapacity = this.#max + 256 * 1024;
    // in shared memory: the store hashes and compresses a sealed pack on its own thread, where it is
    this.#text = new ByteBuffer(this.#packCapacity, { shared: true });
    this.#ids = new ByteBuffer(64 * 1024);
  }

  /** Addresses of every object stored so far (packs and id objects). */
  get objects(): ReadonlySet<string> {
    return this.#objects;
  }

  /** Original bytes paged out so far (before lifting and compression). */
  get bytesIn(): number {
    return this.#bytesIn;
  }

  /** Bytes waiting in the open pack. */
  get pendingBytes(): number {
    return this.#text.length;
  }

  /** The pack the next line will go to, and the offset it will start at. */
  get next(): { pack: PageOutHandle; offset: number } {
    return { pack: this.#pack, offset: this.#text.length };
  }

  /**
   * Appends one line's original bytes (lifted) to the open pack; says where it went. `regions`
   * are the line's content ranges when the caller knows them (see lift.ts `contentRegions`).
   */
  append(line: LineBytes, regions?: readonly number[] | null): PagedPart {
    const offset = this.#text.length;
    const idOffset = this.#ids.length;
    this.#write(line, regions);
    const idLength = this.#ids.length - idOffset;
    return { pack: this.#pack, offset, length: this.#text.length - offset, ...(idLength > 0 ? { ids: this.#idHandle } : {}), idOffset, idLength, digest: lineDigest(line) };
  }

  /** Takes parts an earlier trim stored into a run (their objects are held with this trim's). */
  appendForeign(parts: PagedPart[], foreign: readonly PagedPart[]): void {
    for (const p of foreign) {
      this.holdForeign(p);
      parts.push(p);
    }
  }

  /** Holds the objects of a part an earlier trim stored (an `o` kept as it was). */
  holdForeign(p: PagedPart): void {
    this.#foreign.add(p.pack.hash!);
    if (p.ids?.hash) this.#foreign.add(p.ids.hash);
  }

  /** Objects of earlier trims this trim's annotations name. */
  get foreignObjects(): ReadonlySet<string> {
    return this.#foreign;
  }

  /** Appends one line like `append`, adding where it went to a run's parts (merged when contiguous). */
  appendTo(parts: PagedPart[], line: LineBytes, regions?: readonly number[] | null): void {
    const last = parts[parts.length - 1];
    const offset = this.#text.length;
    const idOffset = this.#ids.length;
    this.#write(line, regions);
    const length = this.#text.length - offset;
    const idLength = this.#ids.length - idOffset;
    if (last && last.hasher && last.pack === this.#pack && last.offset + last.length === offset && (idLength === 0 || !last.ids || last.idLength === 0 || (last.ids === this.#idHandle && last.idOffset + last.idLength === idOffset))) {
      last.length += length;
      hashLine(last.hasher, line);
      if (idLength > 0) {
        if (!last.ids || last.idLength === 0) {
          last.ids = this.#idHandle;
          last.idOffset = idOffset;
          last.idLength = idLength;
        } else last.idLength += idLength;
      }
      return;
    }
    const hasher = createHash('sha256');
    hashLine(hasher, line);
    parts.push({ pack: this.#pack, offset, length, ...(idLength > 0 ? { ids: this.#idHandle } : {}), idOffset, idLength, hasher });
  }

  #write(line: LineBytes, regions: readonly number[] | null | undefined): void {
    if (this.#failure) throw this.#failure;
    const offset = this.#text.length;
    liftLineInto(line.bytes, line.bom, line.eol, this.#text, this.#ids, regions);
    const length = this.#text.length - offset;
    this.#bytesIn += line.bytes.length + line.eol.length + (line.bom ? 3 : 0);
    if (!this.#due) {
      const size = this.#text.length;
      if (size >= this.#max) this.#due = true;
      else if (size >= this.#min) {
        // cut with probability length/gap, decided by the line's own (lifted) tail
        const h = fnv1a(this.#text.view(), Math.max(offset, size - 64), size);
        this.#due = h * this.#gap < length * 0x1_0000_0000;
      }
    }
  }

  /** True when a cut point was passed (call `sealIfDue` at the next safe point). */
  get due(): boolean {
    return this.#due;
  }

  /**
   * Seals the open pack if a cut point was passed (or, with `force`, whatever it holds, and the
   * id object too) and starts storing it, then waits while too many seals are in flight.
   */
  async sealIfDue(force = false): Promise<void> {
    if (this.#failure) throw this.#failure;
    if (!this.#due && !force) return;
    if (this.#text.length > 0) {
      // an allocation grown for a giant line is not kept for reuse
      const reuse = this.#text.capacity <= this.#packCapacity;
      this.#seal(this.#pack, this.#text.take(this.#spare.pop()), reuse);
      this.#pack = newHandle();
    }
    this.#due = false;
    if (this.#ids.length > 0 && (force || this.#ids.length >= this.#minIds)) {
      this.#seal(this.#idHandle, encodeIdObject(this.#ids.take(), this.#idSource), false);
      this.#idHandle = newHandle();
    }
    while (this.#inFlight.size > this.#maxInFlight) await Promise.race(this.#inFlight);
    if (this.#failure) throw this.#failure;
  }

  /** Seals everything and waits until every object is stored; rejects with the first failure. */
  async finish(): Promise<void> {
    await this.sealIfDue(true);
    await Promise.all(this.#inFlight);
    if (this.#failure) throw this.#failure;
  }

  /** Waits for work in flight, ignoring failures (cleanup after an error). */
  async settle(): Promise<void> {
    await Promise.allSettled(this.#inFlight);
  }

  /**
   * Stores `bytes`, hashed and compressed off this thread (`PutOptions.offThread`) while the trim
   * goes on, then reports it: lines waiting for the pack's address are written once it is known.
   */
  #seal(handle: PageOutHandle, bytes: Buffer, reuse: boolean): void {
    const task = (async () => {
      const { hash } = await this.#store.put(bytes, { offThread: true, effort: 'fast' });
      handle.hash = hash;
      this.#objects.add(hash);
      // the store is done with the bytes: their allocation takes a later pack. A pack buffer is
      // made only when every one made is in use (sealIfDue bounds those in flight), so a trim of
      // any size holds a handful of them, and the encoder thread sees no others
      if (reuse) this.#spare.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.buffer.byteLength - bytes.byteOffset));
      await this.#onSealed?.();
    })().catch((error: unknown) => {
      this.#failure ??= error;
    });
    const tracked = task.finally(() => this.#inFlight.delete(tracked));
    this.#inFlight.add(tracked);
  }
}
