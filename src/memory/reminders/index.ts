/**
 * Reminders for tasks coming due: a scheduler over the warm store, a delivery ledger that makes
 * delivery at-least-once and de-duplicated across restarts, and sinks (webhook, callback, the
 * in-process SSE hub).
 */
export { createReminderScheduler, type ReminderScheduler, type ReminderOutcome, type TickReport } from './scheduler.js';
export { REMINDER_DEFAULTS, type ReminderSchedulerOptions } from './scheduler-options.js';
export { createReminderLedger, deliveryKey, type DeliveryRecord, type DeliveryStatus, type ReminderLedger } from './ledger.js';
export { createCallbackSink, reminderJson, type Reminder, type ReminderJson, type ReminderSink } from './reminder.js';
export { createWebhookSink, WebhookError, type WebhookSinkOptions } from './webhook-sink.js';
export { createReminderHub, formatSseEvent, type ReminderHub, type ReminderListener } from './hub.js';
export { composeReminderText, createOfflineReminderResponder, respondReminderOffline, type ComposedReminder } from './compose.js';
