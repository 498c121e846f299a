/**
 * Entities of a message other than the task itself: dates and times (from the resolver), a
 * project name, people and places (from the language's patterns). Offsets are UTF-16 code
 * units into the message as written.
 */
import type { DateMention } from '../../text/dates.js';
import type { Entity } from '../extraction.js';
import { isFunctionWords } from './lexicons.js';
import type { LanguageRules } from './rule-types.js';

/** Date mentions as entities: "time" when a time of day was given or implied, else "date". */
export function dateEntities(mentions: readonly DateMention[]): Entity[] {
  return mentions.map((m) => ({ type: m.hasTime ? 'time' : 'date', text: m.text, index: m.index, valueMs: m.startMs }));
}

/** The project a message names ("XX项目", "the Apollo project"), or undefined. */
export function findProject(text: string, rules: LanguageRules): Entity | undefined {
  const match = rules.project.exec(text);
  if (!match) return undefined;
  const raw = match.groups?.name ?? match.groups?.name2 ?? match.groups?.name3;
  if (!raw) return undefined;
  const name = raw.replace(rules.projectTrim, '').trim();
  if (name.length === 0) return undefined;
  return { type: 'project', text: name, index: match.index + match[0].indexOf(name) };
}

/** People ("老王", "John", "my sister") and places ("会议室", "at the gym") a message names. */
export function findPeopleAndPlaces(text: string, rules: LanguageRules): Entity[] {
  const found: Entity[] = [];
  for (const [type, pattern] of [['person', rules.person], ['place', rules.place]] as const) {
    for (const match of text.matchAll(globalOf(pattern))) {
      const name = match.groups?.name ?? match.groups?.rel ?? match.groups?.name2;
      // ("the dentist call is done": "call" is a verb here, and "is" no one's name)
      if (!name || isFunctionWords(name)) continue;
      const index = match.index + match[0].lastIndexOf(name);
      if (!found.some((e) => e.type === type && e.text === name)) found.push({ type, text: name, index });
    }
  }
  return found;
}

const globals = new WeakMap<RegExp, RegExp>();

/** `pattern` with the g flag, built once per table entry. */
function globalOf(pattern: RegExp): RegExp {
  let global = globals.get(pattern);
  if (!global) {
    global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
    globals.set(pattern, global);
  }
  return global;
}
