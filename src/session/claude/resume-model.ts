/**
 * The model Claude Code 2.1.328 resumes a session with, and what that model changes in the
 * request (docs/resume-model.md §1.9.1): thinking written by another model is not sent back, and
 * opus-4-8 and later models receive reminders as `role:"system"` entries inside `messages`.
 */

/** Claude Code 2.1.328's default model, used when the recorded one is missing or retired. */
export const CLAUDE_DEFAULT_MODEL = 'claude-opus-5-5';

/**
 * Model ids (without a date suffix) in Claude Code 2.1.328's model table that are not retired;
 * `claude-sonnet-4-5` is "deprecated" and still used. Retired ones (Claude 3.x, opus-4-0/4-1,
 * sonnet-4-0) and models served through proxies (e.g. MiniMax-M2.7) resume with the default.
 */
const CURRENT_MODELS: ReadonlySet<string> = new Set([
  'claude-haiku-4-5',
  'claude-haiku-5-5',
  'claude-sonnet-4-5',
  'claude-sonnet-4-6',
  'claude-sonnet-5',
  'claude-sonnet-5-5',
  'claude-opus-4-5',
  'claude-opus-4-6',
  'claude-opus-4-7',
  'claude-opus-4-8',
  'claude-opus-5',
  'claude-opus-5-5',
  'claude-fable-5',
  'claude-fable-5-1',
  'claude-fable-5-2',
  'claude-mythos-5',
  'claude-mythos-5-1',
  'claude-mythos-5-2',
]);

const baseId = (model: string) => model.replace(/\[1m\]$/, '').replace(/-\d{8}$/, '');

/** The model a session whose last real reply was written by `recorded` is resumed with. */
export function claudeResumeModel(recorded: string | undefined): string {
  if (typeof recorded !== 'string') return CLAUDE_DEFAULT_MODEL;
  return CURRENT_MODELS.has(baseId(recorded)) ? recorded : CLAUDE_DEFAULT_MODEL;
}

/** True for models that get reminders as `role:"system"` entries inside `messages` (opus-4-8 and later). */
export function usesSystemEntries(model: string): boolean {
  const m = /^claude-(opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d+))?/.exec(baseId(model));
  if (!m) return false;
  const major = Number(m[2]);
  const minor = Number(m[3] ?? 0);
  return m[1] === 'fable' || m[1] === 'mythos' || major >= 5 || (m[1] === 'opus' && major === 4 && minor >= 8);
}
