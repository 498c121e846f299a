/**
 * Reading page-outs back: a small cache of decompressed packs and id objects (restore reads them
 * in order, so one or two stay hot), and decoding of a `PackPart` into the original bytes.
 */
import { ByteBuffer } from '../../core/byte-buffer.js';
import { CtxvmError, IntegrityError, NotFoundError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import { UuidLiftError } from '../dag/uuid-lift.js';
import { createHash } from 'node:crypto';
import { DIGEST_HEX, partDigest, partIds, type PackPart } from './annotation.js';
import { decodeIdObject } from './id-object.js';
import { unlift } from './lift.js';

/** Objects kept decompressed at once (each at most a few MiB). */
const CACHED_OBJECTS = 4;

/** Reads pack parts from a store. */
export class PackReader {
  readonly #store: ObjectStore;
  readonly #cache = new Map<string, Promise<Buffer>>();
  readonly #idLists = new Map<string, Promise<Buffer>>();
  /** Text shown in a missing-object error (where the reference came from). */
  readonly #where: string;

  constructor(store: ObjectStore, where = 'the trimmed file') {
    this.#store = store;
    this.#where = where;
  }

  /** The decompressed bytes of an object (cached). */
  async object(hash: string): Promise<Buffer> {
    let hit = this.#cache.get(hash);
    if (hit) {
      // most recently used last
      this.#cache.delete(hash);
      this.#cache.set(hash, hit);
      return hit;
    }
    hit = this.#store.get(hash).catch((cause: unknown) => {
      this.#cache.delete(hash);
      if (CtxvmError.is(cause) && cause.code === 'E_NOT_FOUND') {
        throw new NotFoundError(`object ${hash}, named by ${this.#where}, is not in the store`, {
          cause,
          hint: 'restore needs the CTXVM_HOME the trim was made with; objects are kept while the trim holds them (check `ctxvm gc` was not forced)',
        });
      }
      throw cause;
    });
    this.#cache.set(hash, hit);
    while (this.#cache.size > CACHED_OBJECTS) this.#cache.delete(this.#cache.keys().next().value!);
    return hit;
  }

  /** The plain uuid list of an id object (decoded once, cached like objects). */
  #idList(hash: string): Promise<Buffer> {
    let hit = this.#idLists.get(hash);
    if (!hit) {
      hit = this.object(hash).then((stored) => decodeIdObject(stored, hash));
      hit.catch(() => this.#idLists.delete(hash));
      this.#idLists.set(hash, hit);
      while (this.#idLists.size > CACHED_OBJECTS) this.#idLists.delete(this.#idLists.keys().next().value!);
    }
    return hit;
  }

  /**
   * The original bytes a part holds (a fresh buffer: writers may keep it), checked against the
   * part's digest when it has one (`verified` says which).
   */
  async read(part: PackPart): Promise<Buffer> {
    return (await this.readChecked(part)).bytes;
  }

  /** Like `read`, and says whether a digest vouched for the bytes. Throws E_INTEGRITY on a mismatch. */
  async readChecked(part: PackPart): Promise<{ bytes: Buffer; verified: boolean }> {
    const [packHash, offset, length] = part;
    const pack = await this.object(packHash);
    if (offset + length > pack.length) throw new IntegrityError(`pack ${packHash} has ${pack.length} bytes; a part asks for ${offset}+${length}`);
    let ids: Buffer | undefined;
    const idRange = partIds(part);
    if (idRange) {
      const idObject = await this.#idList(idRange.hash);
      if (idRange.offset + idRange.length > idObject.length) throw new IntegrityError(`id object ${idRange.hash} has ${idObject.length} bytes; a part asks for ${idRange.offset}+${idRange.length}`);
      ids = idObject.subarray(idRange.offset, idRange.offset + idRange.length);
    } else ids = Buffer.alloc(0);
    // each lifted UUID (one byte) comes back as 36
    const out = new ByteBuffer(length + ids.length * 3 + 16);
    try {
      unlift(pack.subarray(offset, offset + length), ids, out);
    } catch (cause) {
      if (cause instanceof UuidLiftError) throw new IntegrityError(`pack ${packHash} at ${offset}+${length} does not fit its id list: ${cause.message}`, { cause });
      throw cause;
    }
    const bytes = out.view();
    const digest = partDigest(part);
    if (digest !== undefined) {
      const got = createHash('sha256').update(bytes).digest('hex').slice(0, DIGEST_HEX);
      if (got !== digest) throw new IntegrityError(`pack ${packHash.slice(0, 16)} at ${offset}+${length} does not hold what the annotation recorded (digest ${got}, expected ${digest})`);
    }
    return { bytes, verified: digest !== undefined };
  }
}
