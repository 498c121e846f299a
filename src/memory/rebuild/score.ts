/**
 * Retrieval scoring: each signal is 0..1 and the score is their weighted sum (weights in
 * options.ts). Recency and access decay exponentially with the same half-life, so an item that
 * was used often but long ago weighs about as much as one never used.
 */
import type { SearchHit } from '../memory-store.js';
import type { TaskPriority } from '../model.js';
import type { RetrievalWeights } from './options.js';

/** The signals of one item. */
export interface Signals {
  fullText?: number;
  entity?: number;
  recency?: number;
  importance?: number;
  access?: number;
}

/** The weighted sum of `signals`; missing signals count 0. */
export function combine(signals: Signals, weights: RetrievalWeights): number {
  return (
    weights.fullText * (signals.fullText ?? 0) +
    weights.entity * (signals.entity ?? 0) +
    weights.recency * (signals.recency ?? 0) +
    weights.importance * (signals.importance ?? 0) +
    weights.access * (signals.access ?? 0)
  );
}

/** 0.5 ^ (age / halfLife), 1 for the future. */
export function decay(ageMs: number, halfLifeMs: number): number {
  return ageMs <= 0 ? 1 : Math.pow(0.5, ageMs / halfLifeMs);
}

/** Access weight: grows with the log of the use count (saturating at 20 uses) and decays with idle time. */
export function accessSignal(stats: { count: number; lastMs: number } | undefined, nowMs: number, halfLifeMs: number): number {
  if (!stats || stats.count <= 0) return 0;
  return Math.min(1, Math.log1p(stats.count) / Math.log1p(20)) * decay(nowMs - stats.lastMs, halfLifeMs);
}

/** Full-text scores normalised by the best hit of the call (best = 1), keyed by `kind:id`. */
export function normaliseHits(hits: readonly SearchHit[]): Map<string, number> {
  const best = hits.reduce((max, h) => Math.max(max, h.score), 0);
  const out = new Map<string, number>();
  for (const h of hits) out.set(`${h.kind}:${h.id}`, best > 0 ? h.score / best : 0);
  return out;
}

/** Task priority as an importance signal. */
export const PRIORITY_IMPORTANCE: Readonly<Record<TaskPriority, number>> = { low: 0.2, normal: 0.4, high: 0.7, urgent: 1 };
