/**
 * The binary form of the fs object store's packed reference file (written by gc, like git's
 * packed-refs): every distinct hash once as its 32 bytes, then each holder with the positions of
 * its hashes in that table (src/core/id-list.ts). A growing session's ten snapshots name mostly the
 * same objects, so this costs ~32 bytes an object plus ~1 byte a reference, where the text form
 * repeated the 64 hex digits for every reference (~65 bytes each).
 *
 *   "CTXR" 1-byte version (1)
 *   varint  hash count H, then H × 32 bytes (sorted)
 *   varint  holder count, then for each: varint byte length + UTF-8 holder,
 *           varint byte length + id list of positions into the hash table
 *   8 bytes SHA-256 prefix of everything before
 *
 * Parsing is strict: a damaged file throws rather than reading as fewer references, because gc
 * deletes what no reference names.
 */
import { createHash } from 'node:crypto';
import { decodeIdList, encodeIdList, pushVarint } from '../../core/id-list.js';
import { IntegrityError } from '../../errors.js';

/** holder → hashes. */
export type Refs = Map<string, Set<string>>;

const MAGIC = Buffer.from('CTXR', 'latin1');
const VERSION = 1;
const CHECK_BYTES = 8;

/** True when `file` starts like a binary packed reference file (else it is the older text form). */
export function isBinaryPackedRefs(file: Buffer): boolean {
  return file.length >= MAGIC.length && file.subarray(0, MAGIC.length).equals(MAGIC);
}

function varint(n: number): Buffer {
  const out: number[] = [];
  pushVarint(out, n);
  return Buffer.from(out);
}

export function serializeBinaryPackedRefs(refs: Refs): Buffer {
  const hashes = [...new Set([...refs.values()].flatMap((set) => [...set]))].sort();
  const position = new Map(hashes.map((h, i) => [h, i]));
  const parts: Buffer[] = [MAGIC, Buffer.from([VERSION]), varint(hashes.length)];
  for (const h of hashes) parts.push(Buffer.from(h, 'hex'));
  const holders = [...refs.entries()].filter(([, set]) => set.size > 0).sort((a, b) => (a[0] < b[0] ? -1 : 1));
  parts.push(varint(holders.length));
  for (const [holder, set] of holders) {
    const name = Buffer.from(holder, 'utf8');
    const list = encodeIdList([...set].map((h) => position.get(h)!));
    parts.push(varint(name.length), name, varint(list.length), list);
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, createHash('sha256').update(body).digest().subarray(0, CHECK_BYTES)]);
}

/** Parses a file from `serializeBinaryPackedRefs`; `path` names it in errors. */
export function parseBinaryPackedRefs(file: Buffer, path: string): Refs {
  const damaged = (why: string) =>
    new IntegrityError(`${path}: damaged packed reference file (${why})`, { hint: 'restore the file from a backup; until then gc refuses to run, so nothing it names is deleted' });
  if (file.length < MAGIC.length + 1 + CHECK_BYTES) throw damaged('too short');
  if (file[MAGIC.length] !== VERSION) throw new IntegrityError(`${path}: packed reference format version ${file[MAGIC.length]} is not supported`, { hint: 'upgrade ctxvm' });
  const body = file.subarray(0, file.length - CHECK_BYTES);
  if (!createHash('sha256').update(body).digest().subarray(0, CHECK_BYTES).equals(file.subarray(file.length - CHECK_BYTES))) throw damaged('checksum mismatch');
  let at = MAGIC.length + 1;
  const readVarint = (): number => {
    let n = 0;
    let scale = 1;
    for (;;) {
      if (at >= body.length) throw damaged('it ends inside a number');
      const byte = body[at++]!;
      n += (byte & 0x7f) * scale;
      if (!(byte & 0x80)) return n;
      scale *= 0x80;
      if (scale > 2 ** 49) throw damaged('a number longer than 7 bytes');
    }
  };
  const take = (n: number): Buffer => {
    if (at + n > body.length) throw damaged('it ends inside a field');
    const out = body.subarray(at, at + n);
    at += n;
    return out;
  };
  const hashes: string[] = [];
  for (let i = readVarint(); i > 0; i--) hashes.push(take(32).toString('hex'));
  const refs: Refs = new Map();
  for (let i = readVarint(); i > 0; i--) {
    const holder = take(readVarint()).toString('utf8');
    const set = refs.get(holder) ?? new Set<string>();
    for (const p of decodeIdList(take(readVarint()), path)) {
      const h = hashes[p];
      if (h === undefined) throw damaged(`holder "${holder}" names hash ${p} of ${hashes.length}`);
      set.add(h);
    }
    refs.set(holder, set);
  }
  if (at !== body.length) throw damaged('bytes after the last holder');
  return refs;
}
