/**
 * Date and time mentions of a message, with offsets into the message as written. Spelled-out
 * English numbers are rewritten first ("five p. m." → "5 pm", en-numbers.ts) because the date
 * resolver reads digits; each mention found in the rewritten text is mapped back, so `text` and
 * `index` always refer to what the user wrote.
 */
import { resolveDates, resolveDue } from '../../text/dates.js';
import type { DateMention, DueMention } from '../../text/dates.js';
import type { TimeZone } from '../../core/time-zone.js';
import { normalizeEnglishNumbers } from './en-numbers.js';
import type { NormalizedText } from './en-numbers.js';

/** Reference point for resolving dates. */
export interface DateOptions {
  /** Unix ms. */
  now: number;
  timeZone: TimeZone;
}

const DAY_MS = 86_400_000;

/** Finds and resolves the dates of one message; `due()` is computed on demand (it parses again). */
export class MessageDates {
  readonly mentions: readonly DateMention[];
  private readonly normalized: NormalizedText;

  constructor(
    private readonly text: string,
    private readonly options: DateOptions,
  ) {
    this.normalized = normalizeEnglishNumbers(text);
    this.mentions = resolveDates(this.normalized.text, options).map((m) => this.toOriginal(m));
  }

  /** Whether any mention is today or later (a deadline, a plan), as opposed to "yesterday". */
  get upcoming(): boolean {
    return this.mentions.some((m) => (m.endMs ?? (m.hasTime ? m.startMs : m.startMs + DAY_MS)) >= this.options.now);
  }

  /** The mention most likely to be a due date (resolveDue's choice), or undefined; parsed once. */
  due(): DueMention | undefined {
    if (this.mentions.length === 0) return undefined;
    if (this.dueMention === null) {
      const due = resolveDue(this.normalized.text, this.options);
      this.dueMention = due ? this.toOriginal(due) : undefined;
    }
    return this.dueMention;
  }

  private dueMention: DueMention | undefined | null = null;

  private toOriginal<T extends DateMention>(mention: T): T {
    const [start, end] = this.normalized.toOriginal(mention.index, mention.index + mention.text.length);
    return { ...mention, index: start, text: this.text.slice(start, end) };
  }
}
