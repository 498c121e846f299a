/**
 * Which recent record a change request means: "它", "这个任务", "that one" (the most recent,
 * preferring an open task for complete and update), "第二个"/"the second one" (the second of
 * the caller's list), "最后一个"/"the last one" (the last of the list), or a fuzzy match of the
 * name the message gives ("周报" ↔ "写周报", fuzzy.ts).
 *
 * Ordinals count positions in `recent` as the caller passes it, among records of the kind
 * wanted. `recent` is documented as most recent first; after showing the user a list, the caller
 * should pass that list in display order, so that "the second one" is the second line shown.
 *
 * Order of precedence: an ordinal or "last" phrase, then a name with content (the title cut out
 * of the message), then a pronoun, then, for complete/update/delete, the only candidate there is.
 */
import type { Intent, RecentEntity, ResolvedReference } from '../extraction.js';
import { rankMatches } from './fuzzy.js';
import type { ReferenceRules } from './rule-types.js';

/** What reference resolution found. */
export interface TargetResolution {
  target?: ResolvedReference;
  /** The record meant, for the clarification question. */
  record?: RecentEntity;
}

/** Input of resolveTarget. */
export interface TargetQuery {
  /** The message, NFKC-normalised and lower-cased. */
  lowered: string;
  /** The record's name as the message gives it ('' when it gives none). */
  name: string;
  kind: RecentEntity['kind'];
  intent: Intent;
  recent: readonly RecentEntity[];
  rules: ReferenceRules;
}

const CLOSED = new Set(['done', 'cancelled']);
// Confidence of each way of referring; a fuzzy match earns its own from its score and lead.
const ORDINAL_CONFIDENCE = 0.9;
const LAST_CONFIDENCE = 0.85;
const NAMED_CONFIDENCE = 0.95;
const PRONOUN_CONFIDENCE = 0.8;
const ONLY_CANDIDATE_CONFIDENCE = 0.5;

/** Resolves the record a change request means; empty when nothing fits. */
export function resolveTarget(query: TargetQuery): TargetResolution {
  const pool = query.recent.filter((r) => r.kind === query.kind);
  if (pool.length === 0) return {};
  const { rules, lowered } = query;
  // A record named in full ("move water plant number 3 to Monday") beats an ordinal reading of
  // the same words; the longest such name wins ("number 13" over "number 1").
  const named = pool
    .filter((r) => r.text.trim().length >= 2 && lowered.includes(r.text.trim().toLowerCase()))
    .sort((a, b) => b.text.trim().length - a.text.trim().length)[0];
  if (named) return found(named, named.text, NAMED_CONFIDENCE);
  const ordinal = rules.ordinal.exec(lowered);
  if (ordinal) {
    const n = rules.ordinalValue(ordinal.groups?.n ?? ordinal.groups?.d ?? '');
    const record = n !== undefined ? pool[n - 1] : undefined;
    if (record) return found(record, ordinal[0], ORDINAL_CONFIDENCE);
  }
  const last = rules.last.exec(lowered);
  if (last) return found(pool[pool.length - 1]!, last[0], LAST_CONFIDENCE);
  if (query.name.trim().length > 0) {
    const ranked = rankMatches(query.name, pool, (r) => r.text);
    const best = ranked[0];
    if (best) return found(best.item, query.name, fuzzyConfidence(best.score, ranked[1]?.score ?? 0));
  }
  const pronoun = rules.pronoun.exec(lowered);
  const prefersOpen = query.intent === 'complete_task' || query.intent === 'update_task';
  const mostRecent = (prefersOpen && pool.find((r) => !CLOSED.has(r.status ?? ''))) || pool[0]!;
  if (pronoun) return found(mostRecent, pronoun[0], PRONOUN_CONFIDENCE);
  if (pool.length === 1 && query.name.trim().length === 0) return found(pool[0]!, '', ONLY_CANDIDATE_CONFIDENCE);
  return {};
}

/** A clear winner is trusted; two close candidates are not (the caller then asks). */
function fuzzyConfidence(best: number, second: number): number {
  const lead = (best - second) / best;
  return Math.round(Math.min(0.97, 0.6 * best + 0.4 * lead) * 100) / 100;
}

function found(record: RecentEntity, phrase: string, confidence: number): TargetResolution {
  return { target: { kind: record.kind, id: record.id, phrase, confidence }, record };
}
