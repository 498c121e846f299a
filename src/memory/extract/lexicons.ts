/**
 * Word classes from maintained lexicons, loaded on first use: function words (the `stopword`
 * package's English and Chinese lists), which are never entities ("the dentist call is done" has
 * no person "is"), and English past-tense forms (the `english-verbs-irregular` list, from
 * WordNet, plus the regular -ed form), which report a task as done ("I called the dentist").
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

// Read-only after first use: the lexicons do not change while a process runs.
let functionWords: { en: ReadonlySet<string>; zh: ReadonlySet<string> } | undefined;
let irregularPast: ReadonlyMap<string, string> | undefined;

function lexicon(): { en: ReadonlySet<string>; zh: ReadonlySet<string> } {
  if (!functionWords) {
    const { eng, zho } = require('stopword') as { eng: string[]; zho: string[] };
    functionWords = { en: new Set(eng), zh: new Set(zho) };
  }
  return functionWords;
}

/** Whether `text` is made of function words only ("is", "the", "of the", "了", "的", "这个"). */
export function isFunctionWords(text: string): boolean {
  const { en, zh } = lexicon();
  const words = text.toLowerCase().split(/[\s'’-]+/).filter(Boolean);
  if (words.length === 0) return true;
  return words.every((w) => en.has(w) || zh.has(w) || (/^\p{Script=Han}+$/u.test(w) && [...w].every((c) => zh.has(c))));
}

/** The base form of an English past-tense or past-participle verb ("called" → "call", "sent" → "send"); undefined otherwise. */
export function pastTenseBase(word: string): string | undefined {
  const w = word.toLowerCase();
  const irregular = irregularForms().get(w);
  if (irregular !== undefined) return irregular;
  // Regular: "called", "emailed", "booked", "tried"; not "need", "feed", "red", "bed".
  if (w.length < 5 || !w.endsWith('ed') || w.endsWith('eed')) return undefined;
  if (w.endsWith('ied')) return `${w.slice(0, -3)}y`;
  const stem = w.slice(0, -2);
  return /([b-df-hj-np-tv-z])\1$/.test(stem) ? stem.slice(0, -1) : stem;
}

function irregularForms(): ReadonlyMap<string, string> {
  if (!irregularPast) {
    const verbs = require('english-verbs-irregular/dist/verbs.json') as Record<string, string[][]>;
    const forms = new Map<string, string>();
    for (const [base, variants] of Object.entries(verbs)) {
      for (const [past, participle] of variants) {
        for (const form of [past, participle]) if (form && form !== base && !forms.has(form)) forms.set(form, base);
      }
    }
    irregularPast = forms;
  }
  return irregularPast;
}
