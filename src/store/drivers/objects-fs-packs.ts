/**
 * Pack files of the fs object store: many objects in one file with its index, written by gc
 * (`repack`) the way `git gc` packs loose objects.
 *
 *   <root>/packs/pack-<40 hex>.pack
 *
 *   offset 0   8 bytes   magic "CTXPACK" + format version 1
 *              ...       segments: each one compressed stream of several objects' bytes, back to back
 *   index      u32 segments, u32 objects
 *              per segment (20 bytes): u64 file offset, u32 compressed bytes, u32 raw bytes, u8 codec, 3 zero
 *              per object, by hash (52 bytes): 32-byte sha256, u32 segment, u32 offset in the raw
 *              segment, u32 size, f64 createdAtMs
 *   footer     u64 index offset, u32 index bytes, u32 zero, 32-byte sha256 of the index, "CTXPEND" + 1
 *
 * Objects are compressed together, a segment at a time (brotli with a window as large as the
 * segment), in the order they were first written, so content that recurs across objects — the
 * last chunk of a snapshot inside the next snapshot's chunk, a trim's pack inside the next trim's
 * — is stored about once. Reading an object decodes its segment (kept in a small cache, so
 * neighbours come free) and checks the object's bytes against its address. A pack is published by
 * one rename once it is complete and synced; a crash before that leaves a temp file gc removes.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, type FileHandle } from 'node:fs/promises';
import { promisify } from 'node:util';
import { brotliCompress, constants } from 'node:zlib';
import { join } from 'node:path';
import { fsyncDirectory } from '../../core/atomic-file.js';
import { sha256Hex } from '../../core/hash.js';
import { IntegrityError, ioError } from '../../errors.js';
import { codecFromId, codecId, decompressBuffer } from '../object-codec.js';
import type { ObjectCodecName } from '../object-store.js';
import { errnoCode } from './objects-fs-layout.js';

const MAGIC = Buffer.from('CTXPACK\x01', 'latin1');
const END_MAGIC = Buffer.from('CTXPEND\x01', 'latin1');
const FOOTER_BYTES = 8 + 4 + 4 + 32 + 8;
const SEGMENT_ENTRY = 20;
const OBJECT_ENTRY = 52;

/**
 * Raw bytes of one segment at most, bytes: brotli's largest standard window, so everything in a
 * segment can refer to everything before it. Reading one object decodes its segment (tens of ms).
 */
export const SEGMENT_RAW_BYTES = 16 * 1024 * 1024 - 16;
/** Objects larger than this stay loose (they gain nothing from neighbours), bytes. */
export const MAX_PACKED_OBJECT_BYTES = 4 * 1024 * 1024;
/** brotli quality of packs: gc is not the hot path (measured in docs/storage.md). */
const PACK_QUALITY = 5;

const brotliCompressAsync = promisify(brotliCompress);

export const PACK_NAME = /^pack-[0-9a-f]{40}\.pack$/;

/** One segment of a pack. */
export interface PackSegment {
  fileOffset: number;
  compressedBytes: number;
  rawBytes: number;
  codec: ObjectCodecName;
}

/** Where one object lies in a pack. */
export interface PackEntry {
  segment: number;
  offset: number;
  size: number;
  createdAtMs: number;
}

/** A pack's index, read once. */
export interface PackIndex {
  name: string;
  path: string;
  fileBytes: number;
  segments: PackSegment[];
  entries: Map<string, PackEntry>;
}

/** One object to pack. */
export interface PackInput {
  hash: string;
  bytes: Buffer;
  createdAtMs: number;
}

/** Reads and checks a pack's index. */
export async function readPackIndex(path: string, name: string): Promise<PackIndex> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (cause) {
    throw errnoCode(cause) === 'ENOENT' ? cause : ioError('open a pack', path, cause);
  }
  try {
    const { size } = await handle.stat();
    const bad = (detail: string) => new IntegrityError(`pack ${path}: ${detail}`, { hint: 'run `ctxvm gc` after restoring the file from a backup' });
    if (size < MAGIC.length + FOOTER_BYTES) throw bad(`truncated (${size} bytes)`);
    const footer = Buffer.alloc(FOOTER_BYTES);
    await handle.read(footer, 0, FOOTER_BYTES, size - FOOTER_BYTES);
    if (!footer.subarray(FOOTER_BYTES - 8).equals(END_MAGIC)) throw bad('bad footer');
    const indexOffset = Number(footer.readBigUInt64BE(0));
    const indexBytes = footer.readUInt32BE(8);
    if (indexOffset + indexBytes !== size - FOOTER_BYTES) throw bad('index out of place');
    const index = Buffer.alloc(indexBytes);
    await handle.read(index, 0, indexBytes, indexOffset);
    if (sha256Hex(index) !== footer.subarray(16, 48).toString('hex')) throw bad('index checksum mismatch');
    const segmentCount = index.readUInt32BE(0);
    const objectCount = index.readUInt32BE(4);
    if (8 + segmentCount * SEGMENT_ENTRY + objectCount * OBJECT_ENTRY !== indexBytes) throw bad('index length');
    const segments: PackSegment[] = [];
    for (let i = 0, at = 8; i < segmentCount; i++, at += SEGMENT_ENTRY) {
      const codec = codecFromId(index[at + 16]!);
      if (!codec) throw bad(`unknown codec id ${index[at + 16]}`);
      segments.push({ fileOffset: Number(index.readBigUInt64BE(at)), compressedBytes: index.readUInt32BE(at + 8), rawBytes: index.readUInt32BE(at + 12), codec });
    }
    const entries = new Map<string, PackEntry>();
    for (let i = 0, at = 8 + segmentCount * SEGMENT_ENTRY; i < objectCount; i++, at += OBJECT_ENTRY) {
      const segment = index.readUInt32BE(at + 32);
      if (segment >= segmentCount) throw bad('object in a missing segment');
      entries.set(index.toString('hex', at, at + 32), { segment, offset: index.readUInt32BE(at + 36), size: index.readUInt32BE(at + 40), createdAtMs: index.readDoubleBE(at + 44) });
    }
    return { name, path, fileBytes: size, segments, entries };
  } finally {
    await handle.close();
  }
}

/** Compressed bytes of a segment. */
async function compressSegment(raw: Buffer): Promise<{ codec: ObjectCodecName; bytes: Buffer }> {
  const lgwin = Math.max(16, Math.min(24, Math.ceil(Math.log2(Math.max(raw.length, 1))) + 1));
  const bytes = await brotliCompressAsync(raw, {
    params: { [constants.BROTLI_PARAM_QUALITY]: PACK_QUALITY, [constants.BROTLI_PARAM_LGWIN]: lgwin, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length },
  });
  return bytes.length < raw.length ? { codec: 'brotli', bytes } : { codec: 'none', bytes: raw };
}

/**
 * Writes a pack of `objects` (in the order given) into `dir` and publishes it; undefined when
 * there was nothing to pack. `sync` makes it durable before it is renamed into place.
 */
export async function writePack(dir: string, objects: AsyncIterable<PackInput>, sync = true): Promise<{ name: string; path: string; fileBytes: number; objects: number } | undefined> {
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.pack-${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx');
  let published = false;
  try {
    let position = 0;
    const write = async (b: Buffer) => {
      await handle.write(b, 0, b.length, position);
      position += b.length;
    };
    await write(MAGIC);
    const segments: PackSegment[] = [];
    const entries: Array<{ hash: string } & PackEntry> = [];
    let parts: Buffer[] = [];
    let rawBytes = 0;
    const seal = async () => {
      if (parts.length === 0) return;
      const raw = Buffer.concat(parts, rawBytes);
      parts = [];
      rawBytes = 0;
      const { codec, bytes } = await compressSegment(raw);
      segments.push({ fileOffset: position, compressedBytes: bytes.length, rawBytes: raw.length, codec });
      await write(bytes);
    };
    const seen = new Set<string>();
    for await (const o of objects) {
      if (seen.has(o.hash)) continue;
      seen.add(o.hash);
      if (rawBytes > 0 && rawBytes + o.bytes.length > SEGMENT_RAW_BYTES) await seal();
      entries.push({ hash: o.hash, segment: segments.length, offset: rawBytes, size: o.bytes.length, createdAtMs: o.createdAtMs });
      parts.push(o.bytes);
      rawBytes += o.bytes.length;
    }
    await seal();
    if (entries.length === 0) return undefined;
    entries.sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
    const index = Buffer.alloc(8 + segments.length * SEGMENT_ENTRY + entries.length * OBJECT_ENTRY);
    index.writeUInt32BE(segments.length, 0);
    index.writeUInt32BE(entries.length, 4);
    let at = 8;
    for (const s of segments) {
      index.writeBigUInt64BE(BigInt(s.fileOffset), at);
      index.writeUInt32BE(s.compressedBytes, at + 8);
      index.writeUInt32BE(s.rawBytes, at + 12);
      index[at + 16] = codecId(s.codec);
      at += SEGMENT_ENTRY;
    }
    for (const e of entries) {
      index.write(e.hash, at, 32, 'hex');
      index.writeUInt32BE(e.segment, at + 32);
      index.writeUInt32BE(e.offset, at + 36);
      index.writeUInt32BE(e.size, at + 40);
      index.writeDoubleBE(e.createdAtMs, at + 44);
      at += OBJECT_ENTRY;
    }
    const indexOffset = position;
    await write(index);
    const footer = Buffer.alloc(FOOTER_BYTES);
    footer.writeBigUInt64BE(BigInt(indexOffset), 0);
    footer.writeUInt32BE(index.length, 8);
    const indexHash = sha256Hex(index);
    footer.write(indexHash, 16, 32, 'hex');
    END_MAGIC.copy(footer, FOOTER_BYTES - 8);
    await write(footer);
    if (sync) await handle.sync();
    await handle.close();
    const name = `pack-${indexHash.slice(0, 40)}.pack`;
    const path = join(dir, name);
    await rename(temp, path);
    published = true;
    if (sync) await fsyncDirectory(dir);
    return { name, path, fileBytes: position, objects: entries.length };
  } finally {
    if (!published) {
      await handle.close().catch(() => undefined);
      await rm(temp, { force: true });
    }
  }
}

/** Decoded segments kept per store instance (each at most `SEGMENT_RAW_BYTES`). */
const CACHED_SEGMENTS = 2;

/** The packs of one store as one instance sees them: indexes read once, refreshed on a miss. */
export class PackSet {
  readonly #dir: string;
  #packs = new Map<string, PackIndex>();
  #byHash = new Map<string, PackIndex>();
  readonly #segments = new Map<string, Buffer>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  get dir(): string {
    return this.#dir;
  }

  /** Re-lists the folder: reads indexes of new packs, forgets removed ones. */
  async refresh(): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(this.#dir)).filter((n) => PACK_NAME.test(n));
    } catch (cause) {
      if (errnoCode(cause) !== 'ENOENT') throw ioError('list packs', this.#dir, cause);
      names = [];
    }
    names.sort();
    // nothing new or gone (the usual answer to a lookup of a new object): keep the maps as they are
    if (names.length === this.#packs.size && names.every((n) => this.#packs.has(n))) return;
    const next = new Map<string, PackIndex>();
    for (const name of names) {
      const known = this.#packs.get(name);
      if (known) {
        next.set(name, known);
        continue;
      }
      try {
        next.set(name, await readPackIndex(join(this.#dir, name), name));
      } catch (cause) {
        if (errnoCode(cause) === 'ENOENT') continue; // removed by a gc meanwhile
        throw cause;
      }
    }
    this.#packs = next;
    this.#byHash = new Map();
    for (const p of next.values()) for (const hash of p.entries.keys()) this.#byHash.set(hash, p);
  }

  /** The packs, as of the last refresh. */
  get packs(): readonly PackIndex[] {
    return [...this.#packs.values()];
  }

  /** The pack holding `hash` (refreshing once if unknown), or undefined. */
  async find(hash: string, refresh = true): Promise<{ pack: PackIndex; entry: PackEntry } | undefined> {
    let pack = this.#byHash.get(hash);
    if (!pack && refresh) {
      await this.refresh();
      pack = this.#byHash.get(hash);
    }
    return pack ? { pack, entry: pack.entries.get(hash)! } : undefined;
  }

  /** Every packed hash (refreshed first). */
  async hashes(): Promise<string[]> {
    await this.refresh();
    return [...this.#byHash.keys()];
  }

  /** The object's bytes from its pack, verified; undefined when no pack holds it. */
  async read(hash: string): Promise<Buffer | undefined> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const found = await this.find(hash);
      if (!found) return undefined;
      try {
        const segment = await this.#segment(found.pack, found.entry.segment);
        const { offset, size } = found.entry;
        if (offset + size > segment.length) throw new IntegrityError(`pack ${found.pack.path}: object ${hash} lies past its segment`);
        const bytes = Buffer.from(segment.subarray(offset, offset + size));
        const got = sha256Hex(bytes);
        if (got !== hash) throw new IntegrityError(`object ${hash} (in ${found.pack.path}): content hashes to ${got}`);
        return bytes;
      } catch (cause) {
        // the pack was replaced by a gc between the lookup and the read: look again
        if (errnoCode(cause) !== 'ENOENT') throw cause;
        await this.refresh();
      }
    }
    return undefined;
  }

  /** Stored bytes attributed to one packed object: its share of its segment. */
  storedSize(pack: PackIndex, entry: PackEntry): number {
    const s = pack.segments[entry.segment]!;
    return s.rawBytes === 0 ? 0 : Math.max(1, Math.round((s.compressedBytes * entry.size) / s.rawBytes));
  }

  /** Forgets cached segments of packs that are gone. */
  forget(name: string): void {
    for (const key of [...this.#segments.keys()]) if (key.startsWith(`${name}#`)) this.#segments.delete(key);
  }

  async #segment(pack: PackIndex, index: number): Promise<Buffer> {
    const key = `${pack.name}#${index}`;
    const hit = this.#segments.get(key);
    if (hit) {
      this.#segments.delete(key);
      this.#segments.set(key, hit);
      return hit;
    }
    const s = pack.segments[index]!;
    const handle = await open(pack.path, 'r');
    let compressed: Buffer;
    try {
      compressed = Buffer.alloc(s.compressedBytes);
      const { bytesRead } = await handle.read(compressed, 0, s.compressedBytes, s.fileOffset);
      if (bytesRead !== s.compressedBytes) throw new IntegrityError(`pack ${pack.path}: segment ${index} is truncated`);
    } finally {
      await handle.close();
    }
    let raw: Buffer;
    try {
      raw = await decompressBuffer(compressed, s.codec, s.rawBytes);
    } catch (cause) {
      throw new IntegrityError(`pack ${pack.path}: segment ${index} is corrupt ${s.codec} data (${(cause as Error).message})`, { cause });
    }
    if (raw.length !== s.rawBytes) throw new IntegrityError(`pack ${pack.path}: segment ${index} decodes to ${raw.length} bytes, ${s.rawBytes} recorded`);
    this.#segments.set(key, raw);
    while (this.#segments.size > CACHED_SEGMENTS) this.#segments.delete(this.#segments.keys().next().value!);
    return raw;
  }
}
