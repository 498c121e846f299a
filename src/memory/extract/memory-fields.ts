/**
 * The memory part of an extraction: the statement of a decision (split from its rationale at
 * "因为"/"because"), a fact, a preference with its key ("以后按优先级排序" → taskSort), or the
 * subject of a recall question ("我上次说的预算是什么" → 预算).
 */
import { zoneFromName } from '../../core/zone-names.js';
import type { Entity, Extraction, Intent } from '../extraction.js';
import { zoneId } from '../format-time.js';
import type { LanguageRules } from './rule-types.js';

const TIME_ZONE_KEY = 'timeZone';

/** The zone a statement of place or zone sets ("I'm in Berlin" → Europe/Berlin), or undefined. */
export function statedZone(lowered: string, rules: LanguageRules): string | undefined {
  const groups = rules.zoneStatement.exec(lowered)?.groups;
  const place = groups?.place ?? groups?.place2 ?? groups?.place3;
  if (place === undefined) return undefined;
  const zone = zoneFromName(place);
  return zone !== undefined ? zoneId(zone) : undefined;
}

/** Longest statement kept, UTF-16 code units. */
const MAX_STATEMENT_CHARS = 500;
const TRIM = /^[\s，,。.!！?？;；:：]+|[\s，,。.!！?？;；:：]+$/g;

/** The memory fields and the entity (decision, fact) of a memory intent; empty for other intents. */
export function memoryPart(intent: Intent, message: string, lowered: string, rules: LanguageRules): Pick<Extraction, 'memory'> & { entity?: Entity } {
  const text = clean(message);
  switch (intent) {
    case 'record_decision': {
      const split = rules.rationale.exec(text);
      const statement = clean(split?.groups?.statement ?? text);
      const rationale = split?.groups?.rationale ? clean(split.groups.rationale) : null;
      return { memory: { text: statement, key: null, rationale }, entity: { type: 'decision', text: statement } };
    }
    case 'record_fact':
      return { memory: { text, key: null, rationale: null }, entity: { type: 'fact', text } };
    case 'set_preference': {
      const rule = rules.preferences.find((p) => p.pattern.test(lowered));
      if (rule?.key !== TIME_ZONE_KEY) return { memory: { text, key: rule?.key ?? null, rationale: null } };
      // A zone is kept only when the zone database knows the name: an unknown one would replace
      // the user's zone with text no clock can read.
      const named = rule.valueGroup ? rule.pattern.exec(lowered)?.groups?.[rule.valueGroup] : undefined;
      const zone = named !== undefined ? zoneFromName(named) : undefined;
      return { memory: zone !== undefined ? { text, key: TIME_ZONE_KEY, value: zoneId(zone), rationale: null } : { text, key: null, rationale: null } };
    }
    case 'recall': {
      const topic = rules.recallTopic.exec(lowered)?.groups?.topic;
      return { memory: { text: topic ? clean(topic) : text, key: null, rationale: null } };
    }
    default:
      return {};
  }
}

function clean(text: string): string {
  const trimmed = text.replace(TRIM, '').replace(/\s+/g, ' ');
  return trimmed.length > MAX_STATEMENT_CHARS ? `${trimmed.slice(0, MAX_STATEMENT_CHARS)}…` : trimmed;
}
