/**
 * The reminder scheduler settings `ctxvm serve` takes from its options and environment, shared
 * by the single-process server and the primary of `--workers N`: the configured LLM, the webhook
 * (signed when CTXVM_WEBHOOK_SECRET is set), lead and interval, and logging of each outcome.
 */
import type { Logger } from 'pino';
import type { ConfiguredLlm } from '../llm/from-env.js';
import type { ServerRemindersOptions } from '../server/server-reminders.js';
import type { ServeOptions } from './commands/serve.js';

type ReminderSettings = Pick<ServerRemindersOptions, 'llm' | 'webhook' | 'leadMs' | 'intervalMs' | 'onTick' | 'onError'>;

/** Scheduler options from `serve`'s flags (everything but the store, manager, db and sink). */
export function reminderSettings(opts: ServeOptions, env: Readonly<Record<string, string | undefined>>, configured: ConfiguredLlm, logger: Logger): ReminderSettings {
  const secret = env.CTXVM_WEBHOOK_SECRET || undefined;
  return {
    ...(configured.name !== 'offline' ? { llm: configured.llm } : {}),
    ...(opts.reminderWebhook ? { webhook: { url: opts.reminderWebhook, ...(secret ? { secret } : {}) } } : {}),
    ...(opts.reminderLead !== undefined ? { leadMs: opts.reminderLead * 60_000 } : {}),
    ...(opts.reminderInterval !== undefined ? { intervalMs: opts.reminderInterval * 1000 } : {}),
    onTick: (report) => {
      // retries are routine with SSE (nobody listening yet): debug; the rest: info
      for (const o of report.outcomes) logger[o.status === 'retrying' ? 'debug' : 'info']({ reminder: o.id, user: o.userId, status: o.status, ...(o.error ? { error: o.error } : {}) }, 'reminder');
    },
    onError: (error) => logger.warn({ err: (error as Error)?.message ?? String(error) }, 'reminder scan failed; retrying at the next interval'),
  };
}
