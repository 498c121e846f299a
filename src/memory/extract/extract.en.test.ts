import { describe, expect, it } from 'vitest';
import { extract } from './extract.js';
import { zonedParts } from '../../core/time-zone.js';
import type { TimeZone } from '../../core/time-zone.js';
import type { Intent } from '../extraction.js';
import type { TaskPriority } from '../model.js';

/** Tuesday 2026-03-10 09:30 in New York (EDT, two days after the spring change). */
const ZONE = 'America/New_York';
const NOW = Date.parse('2026-03-10T09:30:00-04:00');

const FIXTURES: Fixture[] = [
  // New tasks; date-only dues are at the 18:00 workday end.
  { text: 'Remind me to call mom tomorrow at 5pm', intent: 'create_task', title: 'call mom', due: '2026-03-11 17:00' },
  { text: "I need to finish the quarterly report by Friday, it's urgent", intent: 'create_task', title: 'finish the quarterly report', due: '2026-03-13 18:00', priority: 'urgent' },
  { text: 'Add buy milk to my shopping list', intent: 'create_task', title: 'buy milk', due: null },
  { text: 'Schedule a meeting with John next Tuesday at 3pm', intent: 'create_task', title: 'meeting with John', due: '2026-03-17 15:00' },
  { text: "Don't forget to pay the electricity bill on March 15", intent: 'create_task', title: 'pay the electricity bill', due: '2026-03-15 18:00' },
  { text: 'Set an alarm for 6:30 am tomorrow', intent: 'create_task', title: 'alarm', due: '2026-03-11 06:30' },
  { text: 'set an alarm for seven thirty am', intent: 'create_task', title: 'alarm', due: '2026-03-11 07:30' },
  { text: 'Submit the expense report before end of day, high priority', intent: 'create_task', title: 'Submit the expense report', due: '2026-03-10 18:00', priority: 'high' },
  { text: 'Email the slides to Sarah by Thursday', intent: 'create_task', title: 'Email the slides to Sarah', due: '2026-03-12 18:00' },
  { text: 'in 20 minutes remind me to take the pizza out', intent: 'create_task', title: 'take the pizza out', due: '2026-03-10 09:50' },
  { text: 'Buy flowers for Anna before the weekend', intent: 'create_task', title: 'Buy flowers for Anna', due: '2026-03-13 18:00' },
  { text: 'Prepare the board deck ASAP', intent: 'create_task', title: 'Prepare the board deck', priority: 'urgent' },
  { text: 'Tomorrow 9am dentist', intent: 'create_task', title: 'dentist', due: '2026-03-11 09:00' },
  { text: 'Renew passport next month', intent: 'create_task', title: 'Renew passport', due: '2026-04-30 18:00' },
  { text: 'I have a meeting with the landlord on Friday at 2pm', intent: 'create_task', title: 'meeting with the landlord', due: '2026-03-13 14:00' },
  { text: 'remind me to call 王伟 tomorrow', intent: 'create_task', title: 'call 王伟', due: '2026-03-11 18:00' },
  { text: 'wake me up at five p. m.', intent: 'create_task', due: '2026-03-10 17:00' },
  { text: 'Low priority: clean up the garage someday', intent: 'create_task', priority: 'low' },
  // Queries.
  { text: "What's on my calendar today?", intent: 'query_tasks' },
  { text: 'What do I have to do this week?', intent: 'query_tasks' },
  { text: 'Show me my open tasks', intent: 'query_tasks' },
  { text: 'Any meetings tomorrow?', intent: 'query_tasks' },
  { text: 'How is the Apollo project going?', intent: 'query_project', project: 'Apollo' },
  // Changes (no recent records here; see references.test.ts for targets).
  { text: 'Delete the dentist appointment', intent: 'delete_task' },
  { text: "Cancel tomorrow's standup", intent: 'delete_task' },
  { text: 'Move the standup to 10am', intent: 'update_task', due: '2026-03-10 10:00' },
  { text: 'Push the demo back to next Monday', intent: 'update_task', due: '2026-03-16 18:00' },
  { text: 'I finished the slides', intent: 'complete_task' },
  // Memory.
  { text: 'We decided to go with Postgres because it supports JSONB', intent: 'record_decision', memory: 'We decided to go with Postgres', rationale: 'it supports JSONB' },
  { text: "Let's use React for the frontend since the team knows it", intent: 'record_decision', rationale: 'the team knows it' },
  { text: 'My sister is a nurse', intent: 'record_fact' },
  { text: 'I live in Berlin', intent: 'record_fact' },
  { text: "I'm allergic to peanuts", intent: 'record_fact' },
  { text: 'My time zone is PST', intent: 'set_preference', key: 'timeZone' },
  { text: 'Please always sort my tasks by due date', intent: 'set_preference', key: 'taskSort' },
  { text: 'Reply in Chinese from now on', intent: 'set_preference', key: 'language' },
  { text: 'Call me Alex', intent: 'set_preference', key: 'name' },
  { text: 'What did I say about the budget?', intent: 'recall', memory: 'the budget' },
  { text: 'Do you remember the restaurant I mentioned?', intent: 'recall' },
  // Not for memory.
  { text: 'Hello there', intent: 'chat' },
  { text: "What's the weather like today?", intent: 'chat' },
  { text: 'Play some jazz', intent: 'chat' },
  { text: 'Thanks!', intent: 'chat' },
  { text: 'Turn off the kitchen lights', intent: 'chat' },
];

describe('extract (English, now = 2026-03-10 09:30 America/New_York)', () => {
  it('has at least 40 fixtures', () => {
    expect(FIXTURES.length).toBeGreaterThanOrEqual(40);
  });

  for (const f of FIXTURES) {
    it(`${f.text} → ${f.intent}`, () => {
      const e = extract(f.text, { now: NOW, timeZone: ZONE });
      expect(e.language).toBe('en');
      expect(e.intent).toBe(f.intent);
      expect(e.confidence).toBeGreaterThanOrEqual(0);
      expect(e.confidence).toBeLessThanOrEqual(1);
      if (f.title !== undefined) expect(e.task?.title).toBe(f.title);
      if (f.due !== undefined) expect(e.task?.due == null ? null : wallTime(e.task.due, ZONE)).toBe(f.due);
      if (f.priority !== undefined) expect(e.task?.priority).toBe(f.priority);
      if (f.key !== undefined) expect(e.memory?.key).toBe(f.key);
      if (f.memory !== undefined) expect(e.memory?.text).toBe(f.memory);
      if (f.rationale !== undefined) expect(e.memory?.rationale).toBe(f.rationale);
      if (f.project !== undefined) expect(e.entities.find((x) => x.type === 'project')?.text).toBe(f.project);
    });
  }

  it('maps a spelled-out due phrase back to the words written', () => {
    const e = extract('wake me up at five p. m.', { now: NOW, timeZone: ZONE });
    expect(e.task?.duePhrase).toBe('at five p. m.');
  });

  it('resolves the same words in the user zone, not the server zone', () => {
    const shanghai = extract('Remind me to call mom tomorrow at 5pm', { now: NOW, timeZone: 'Asia/Shanghai' });
    expect(wallTime(shanghai.task!.due!, 'Asia/Shanghai')).toBe('2026-03-11 17:00');
  });
});

/** One utterance and what the extractor should make of it. */
interface Fixture {
  text: string;
  intent: Intent;
  /** Expected task title (create), or the target's title (change requests). */
  title?: string;
  /** Expected due as local wall time "YYYY-MM-DD HH:mm", or null for none. */
  due?: string | null;
  priority?: TaskPriority;
  /** Expected memory key (preferences) or text (recall topic, decision statement). */
  key?: string | null;
  memory?: string;
  rationale?: string;
  project?: string;
}

/** Formats an instant as "YYYY-MM-DD HH:mm" in `zone`. */
function wallTime(ms: number, zone: TimeZone): string {
  const p = zonedParts(ms, zone);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${p.year}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:${pad(p.minute)}`;
}
