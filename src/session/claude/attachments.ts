/**
 * `attachment` lines (docs/resume-model.md §1.6.1): Claude Code renders each one on the chain as
 * a `<system-reminder>` text (or nothing), from the attachment's payload and its own wording.
 * The text below is Claude Code 2.1.328's for the types seen in the wild; other types are
 * reported as not modelled rather than guessed.
 */

export interface RenderedAttachment {
  /** The reminder text, or undefined when Claude Code sends nothing for it. */
  text?: string;
  /** A type whose rendering is not reproduced here. */
  unmodelled?: boolean;
}

interface AttachmentPayload {
  type?: unknown;
  [key: string]: unknown;
}

const reminder = (t: string) => `<system-reminder>\n${t}\n</system-reminder>`;
const escapeTrailingLt = (s: string) => s.replace(/<(?=\s*(?:\/\s*)?$)/, '&lt;');

/** Types whose renderer returns nothing in 2.1.328 (todo_reminder: the TodoWrite tool is off). */
const SILENT: ReadonlySet<string> = new Set([
  'already_read_file',
  'async_hook_response_batch',
  'batching_reminder_sent',
  'secondary_reminder_sent',
  'prompt_as_file',
  'command_permissions',
  'edited_image_file',
  'hook_cancelled',
  'hook_error_during_execution',
  'hook_non_blocking_error',
  'hook_system_message',
  'hook_permission_decision',
  'hook_deferred_tool',
  'goal_status',
  'session_cron_carry',
  'projects_thread_ask',
  'structured_output',
  'max_turns_reached',
  'teammate_shutdown_batch',
  'withheld_memory',
  'goals',
  'thinking_drop',
  'tool_results_cut',
  'credential_org',
  'tool_offer_record',
  'prompt_snapshot',
  'prompt_render_point',
  'whole_texts_withdrawn',
  'deferred_tools_record',
  'todo_reminder',
  'attention_budget',
  'context_efficiency',
  'teammate_mailbox',
  'team_context',
]);

const HOOK_SUCCESS_EVENTS = ['SessionStart', 'UserPromptSubmit', 'UserPromptExpansion'];

const TASK_REMINDER =
  "The task tools haven't been used recently. If you're working on tasks that would benefit from tracking progress, consider using TaskCreate to add new tasks and TaskUpdate to update task status (set to in_progress when starting, completed when done). Also consider cleaning up the task list if it has become stale. Only use these if relevant to the current work. This is just a gentle reminder - ignore if not applicable.\n";

const AUTO_MODE =
  "## Auto Mode Active\n\nBias toward working without stopping for clarifying questions \u2014 when you'd normally pause to check, make the reasonable call and keep going; they'll redirect you if needed. If the user, a skill, or the shape of the task suggests they want you to ask (with AskUserQuestion or otherwise), do so. And even absent that signal, it's still fine to stop when you're genuinely blocked \u2014 unclear direction, missing input, a decision only they can make.\n\nBefore any command that could discard uncommitted work \u2014 `git checkout`/`restore`/`reset`/`clean`, `rm -rf` in the repo, restoring from a snapshot \u2014 run `git status` first and stash (with `-u` for untracked) or commit anything that's there. When staging or committing, review what's included (`git status` after a broad `git add`), and if you see anything suspicious that might reveal secrets \u2014 even if the filename looks innocuous \u2014 double-check the file's contents before pushing.";

const AUTO_MODE_EXIT =
  '## Exited Auto Mode\n\nYou have exited auto mode. The user may now want to interact more directly. You should ask clarifying questions when the approach is ambiguous rather than making assumptions.';

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** What Claude Code 2.1.328 sends for one attachment payload. */
export function renderAttachment(att: AttachmentPayload | undefined): RenderedAttachment {
  const type = att?.type;
  if (typeof type !== 'string' || SILENT.has(type)) return {};
  const a = att!;
  switch (type) {
    case 'skill_listing': {
      if (!a.content) return {};
      const [also, tail] = a.addsToEarlier === true ? ['also ', '. This list adds to the skills listed earlier in this conversation and is not the full list'] : ['', ''];
      const body =
        a.shortened === true
          ? `${str(a.content)}\nThis list is shortened to save room: a description that ends in \u2026 is cut there. The skills themselves are not cut. When a request fits a skill's name or the shown part of its description, use the skill.`
          : str(a.content);
      return { text: reminder(`The following skills are ${also}available for use with the Skill tool${tail}:\n\n${body}`) };
    }
    case 'task_reminder': {
      if (a.statusKeeper === 'app' || a.statusKeeper === 'claude') return { unmodelled: true };
      const items = (Array.isArray(a.content) ? (a.content as { id?: unknown; status?: unknown; subject?: unknown }[]) : [])
        .map((y) => `#${String(y.id)}. [${String(y.status)}] ${String(y.subject)}`)
        .join('\n');
      return { text: reminder(items.length > 0 ? `${TASK_REMINDER}\n\nHere are the existing tasks:\n\n${items}` : TASK_REMINDER) };
    }
    case 'hook_success':
      return HOOK_SUCCESS_EVENTS.includes(str(a.hookEvent)) && a.content ? { text: reminder(escapeTrailingLt(`${str(a.hookName)} hook success: ${str(a.content)}`)) } : {};
    case 'hook_additional_context':
      return Array.isArray(a.content) && a.content.length > 0 ? { text: reminder(escapeTrailingLt(`${str(a.hookName)} hook additional context: ${a.content.join('\n')}`)) } : {};
    case 'edited_text_file': {
      const note = `Note: ${str(a.filename)} changed on disk since you last read it. That's usually deliberate, so take it as the current state rather than reverting it; if the change looks wrong, say so rather than undoing it yourself \u2014 otherwise no need to call it out.`;
      return {
        text: reminder(a.snippet === '' ? `${note} The changes are not shown here; use Read if you need the current content.` : `${note} Here are the relevant changes (shown with line numbers):\n${str(a.snippet)}`),
      };
    }
    case 'auto_mode':
      // the bypass / steerOnly / bashFirst / finishExposedWork / consent variants add text not reproduced here
      return a.bypass || a.steerOnly || a.bashFirst || a.finishExposedWork || a.autoModeConsentFlow ? { unmodelled: true } : { text: reminder(AUTO_MODE) };
    case 'auto_mode_exit':
      return a.steerOnly || a.bashFirst || a.finishExposedWork ? { unmodelled: true } : { text: reminder(AUTO_MODE_EXIT) };
    default:
      return { unmodelled: true };
  }
}
