/**
 * The packing half of the fs store's gc, run under the gc lock after loose objects were collected:
 * referenced loose objects go into a pack, packed objects nothing references any more (and older
 * than the grace period) are left out of the next pack, and the reference files are merged.
 *
 * A full repack writes one new pack of everything live — loose and packed, in the order objects
 * were first written, so similar content sits in one compression window — then removes the old
 * packs and the loose copies. It runs when something packed died, when packs pile up, or when the
 * loose bytes are a sizeable share of the packed ones; otherwise only the loose objects get a new
 * pack of their own, which keeps a gc over a large store cheap. While another writer holds a
 * lease, no packed object is dropped (see objects-fs-lease.ts).
 */
import { rm, rmdir, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { GcResult } from '../object-store.js';
import type { FsBundles } from './objects-fs-bundles.js';
import { listHashes } from './objects-fs-gc.js';
import { errnoCode, type FsLayout } from './objects-fs-layout.js';
import { MAX_PACKED_OBJECT_BYTES, writePack, type PackInput, type PackSet } from './objects-fs-packs.js';
import { readObject } from './objects-fs-read.js';
import { allMarkers, removeMarkerFiles } from './objects-fs-refs.js';

/** A full repack happens once this many packs exist. */
const MAX_PACKS = 8;

export interface RepackContext {
  layout: FsLayout;
  packs: PackSet;
  bundles: FsBundles;
  now: () => number;
  graceMs: number;
  /** Another writer holds a lease: drop no packed object this time. */
  writersLive: boolean;
  /** Loose hashes the loose pass examined (so `scanned` counts each object once). */
  looseScanned: ReadonlySet<string>;
}

/** Packs referenced loose objects, drops dead packed ones, merges reference files. */
export async function repack(ctx: RepackContext): Promise<GcResult> {
  const { layout, packs, bundles } = ctx;
  const result: GcResult = { scanned: 0, deleted: 0, freedBytes: 0 };
  await packs.refresh();
  const markers = await allMarkers(layout);
  const referenced = await bundles.referenced();
  for (const [, hash] of markers) referenced.add(hash);

  const live: Array<{ hash: string; createdAtMs: number; pack: string; segment: number; offset: number }> = [];
  const liveHashes = new Set<string>();
  const dead = new Map<string, number>();
  let packedRaw = 0;
  for (const p of packs.packs) {
    for (const [hash, e] of p.entries) {
      if (!ctx.looseScanned.has(hash)) result.scanned++;
      if (liveHashes.has(hash)) continue; // a copy in another pack is kept
      const keep = referenced.has(hash) || ctx.writersLive || ctx.now() - e.createdAtMs < ctx.graceMs;
      if (keep) {
        live.push({ hash, createdAtMs: e.createdAtMs, pack: p.name, segment: e.segment, offset: e.offset });
        liveHashes.add(hash);
        packedRaw += e.size;
      } else if (!dead.has(hash)) dead.set(hash, packs.storedSize(p, e));
    }
  }
  const livePacked = liveHashes;
  for (const [hash, freed] of dead) {
    if (livePacked.has(hash)) dead.delete(hash);
    else {
      result.deleted++;
      result.freedBytes += freed;
    }
  }

  // loose objects worth packing: referenced, not huge; loose copies of packed objects just go
  const loose: Array<{ hash: string; mtimeMs: number }> = [];
  const duplicates: string[] = [];
  let looseRaw = 0;
  for await (const hash of listHashes(layout)) {
    if (livePacked.has(hash)) {
      duplicates.push(hash);
      continue;
    }
    if (!referenced.has(hash)) continue;
    let info;
    try {
      info = await stat(layout.objectPath(hash));
    } catch (cause) {
      if (errnoCode(cause) === 'ENOENT') continue;
      throw cause;
    }
    // the file's size bounds the object's only loosely (compressed): the bytes decide below
    if (info.size > MAX_PACKED_OBJECT_BYTES) continue;
    loose.push({ hash, mtimeMs: info.mtimeMs });
    looseRaw += info.size;
  }
  loose.sort((a, b) => a.mtimeMs - b.mtimeMs);

  const full = dead.size > 0 || packs.packs.length >= MAX_PACKS || (loose.length > 0 && looseRaw * 4 >= packedRaw);
  const packedLoose: string[] = [];
  async function* inputs(): AsyncGenerator<PackInput> {
    if (full) {
      const order = [...packs.packs].sort((a, b) => minCreated(a.entries) - minCreated(b.entries));
      const byPack = new Map<string, typeof live>();
      for (const l of live) byPack.set(l.pack, [...(byPack.get(l.pack) ?? []), l]);
      for (const p of order) {
        const mine = (byPack.get(p.name) ?? []).sort((a, b) => a.segment - b.segment || a.offset - b.offset);
        for (const l of mine) {
          const bytes = await packs.read(l.hash);
          if (bytes) yield { hash: l.hash, bytes, createdAtMs: l.createdAtMs };
        }
      }
    }
    for (const l of loose) {
      let bytes: Buffer;
      try {
        bytes = await readObject(layout, l.hash);
      } catch {
        continue; // gone or damaged: it stays (or not) as it is
      }
      if (bytes.length > MAX_PACKED_OBJECT_BYTES) continue;
      packedLoose.push(l.hash);
      yield { hash: l.hash, bytes, createdAtMs: Math.round(l.mtimeMs) };
    }
  }
  const before = packs.packs;
  if (full || loose.length > 0) {
    const written = await writePack(packs.dir, inputs());
    if (full) {
      for (const p of before) {
        if (written && p.name === written.name) continue;
        await rm(p.path, { force: true });
        packs.forget(p.name);
      }
    }
    // the pack is durable: the loose copies can go
    await removeLoose(layout, [...packedLoose, ...duplicates]);
    await packs.refresh();
  } else await removeLoose(layout, duplicates);
  await bundles.pack(
    markers.map(([holder, hash]) => [holder, hash] as [string, string]),
    () => removeMarkerFiles(layout, markers),
  );
  return result;
}

/** Unlinks loose copies, then the fan-out folders left empty. */
async function removeLoose(layout: FsLayout, hashes: readonly string[]): Promise<void> {
  for (const hash of hashes) await unlink(layout.objectPath(hash)).catch(() => undefined);
  const dirs = new Set(hashes.map((h) => layout.objectDir(h)));
  for (const dir of dirs) await rmdir(dir).catch(() => undefined);
  for (const dir of new Set([...dirs].map((d) => dirname(d)))) await rmdir(dir).catch(() => undefined);
}

function minCreated(entries: ReadonlyMap<string, { createdAtMs: number }>): number {
  let min = Infinity;
  for (const e of entries.values()) min = Math.min(min, e.createdAtMs);
  return min;
}
