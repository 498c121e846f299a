/**
 * Builds a reminder's text through the memory engine's rebuild path: the six-layer context for
 * the query "reminder: <task title>" (so related history, the project and the user's
 * preferences come along), then the `llm` callback — the offline reminder responder unless the
 * user gave one. When the LLM fails, the offline text is used instead: a reminder that arrives
 * on time in plain words beats one that never arrives.
 */
import { formatLocalClock, formatLocalDate } from '../format-time.js';
import type { LlmCallback, LlmRequest } from '../../llm/llm.js';
import type { Extraction } from '../extraction.js';
import { detectLanguage } from '../extract/language.js';
import type { MemoryManager } from '../manager.js';
import type { Task } from '../model.js';

/** What `composeReminderText` produced. */
export interface ComposedReminder {
  text: string;
  /** "llm" when the callback answered, "offline" for the offline responder or a fallback to it. */
  source: 'llm' | 'offline';
  /** Why the LLM's answer was not used (its error message), when it fell back. */
  fallbackReason?: string;
}

/** Inputs of `composeReminderText`. */
export interface ComposeReminderInput {
  manager: MemoryManager;
  task: Task;
  /** The instant of the reminder, Unix ms. */
  nowMs: number;
  /** The user's LLM (default: the offline reminder responder). */
  llm?: LlmCallback;
  /** Context budget, tokens (default: the manager's). */
  budgetTokens?: number;
}

/** Rebuilds the user's context for the task and asks the LLM for the reminder. */
export async function composeReminderText(input: ComposeReminderInput): Promise<ComposedReminder> {
  const { manager, task, nowMs } = input;
  const timeZone = await manager.timeZoneOf(task.userId);
  const query = `reminder: ${task.title}`;
  const context = await manager.buildContext(task.userId, query, { now: nowMs, ...(input.budgetTokens !== undefined ? { budgetTokens: input.budgetTokens } : {}) });
  const language = detectLanguage(task.title);
  const userMessage = `${query}\n${instruction(task, nowMs, language, timeZone)}`;
  const request: LlmRequest = {
    context,
    userMessage,
    messages: [
      { role: 'system', content: context.text },
      { role: 'user', content: userMessage },
    ],
    extraction: reminderExtraction(task, language),
    userId: task.userId,
    nowMs,
    timeZone,
  };
  if (!input.llm) return { text: respondReminderOffline(request), source: 'offline' };
  try {
    const text = await input.llm(request);
    if (typeof text === 'string' && text.trim() !== '') return { text: text.trim(), source: 'llm' };
    return { text: respondReminderOffline(request), source: 'offline', fallbackReason: 'the LLM returned no text' };
  } catch (error) {
    return { text: respondReminderOffline(request), source: 'offline', fallbackReason: (error as Error)?.message ?? String(error) };
  }
}

/** The offline reminder responder as an LLM callback (deterministic, no network). */
export function createOfflineReminderResponder(): LlmCallback {
  return async (request) => respondReminderOffline(request);
}

/** The offline reminder for a request built by `composeReminderText`. */
export function respondReminderOffline(request: LlmRequest): string {
  const task = request.extraction.task;
  const title = task?.title ?? request.userMessage.replace(/^reminder:\s*/, '').split('\n')[0] ?? '';
  const zh = request.extraction.language === 'zh';
  if (task?.due == null) return zh ? `提醒：任务「${title}」。` : `Reminder: "${title}".`;
  const when = describeInstant(task.due, request.nowMs, request.timeZone, zh);
  const delta = task.due - request.nowMs;
  if (delta > 0) {
    const left = describeDuration(delta, zh);
    return zh ? `提醒：任务「${title}」将于${when} 到期（还有 ${left}）。` : `Reminder: "${title}" is due ${when} (in ${left}).`;
  }
  if (-delta < 60_000) return zh ? `提醒：任务「${title}」现在到期（${when}）。` : `Reminder: "${title}" is due now (${when}).`;
  const late = describeDuration(-delta, zh);
  return zh ? `提醒：任务「${title}」已于${when} 到期（已逾期 ${late}）。` : `Reminder: "${title}" was due ${when} (overdue by ${late}).`;
}

function instruction(task: Task, nowMs: number, language: 'zh' | 'en', zone: LlmRequest['timeZone']): string {
  const zh = language === 'zh';
  const when = task.dueAtMs === null ? '' : describeInstant(task.dueAtMs, nowMs, zone, zh);
  return zh
    ? `请用一两句话提醒用户：任务「${task.title}」${task.dueAtMs !== null && task.dueAtMs < nowMs ? '已于' : '将于'}${when} 到期。可以提到上下文中相关的信息，不要编造。`
    : `Write a short reminder (one or two sentences) telling the user that "${task.title}" ${task.dueAtMs !== null && task.dueAtMs < nowMs ? 'was' : 'is'} due ${when}. Mention anything relevant from the context; invent nothing.`;
}

function reminderExtraction(task: Task, language: 'zh' | 'en'): Extraction {
  return {
    intent: 'chat',
    confidence: 1,
    entities: [{ type: 'task', text: task.title }],
    task: { title: task.title, status: task.status, priority: task.priority, due: task.dueAtMs, duePhrase: task.duePhrase, project: null },
    language,
    source: 'rules',
  };
}

function describeInstant(instantMs: number, nowMs: number, zone: LlmRequest['timeZone'], zh: boolean): string {
  const clock = formatLocalClock(instantMs, zone);
  if (formatLocalDate(instantMs, zone) === formatLocalDate(nowMs, zone)) return zh ? `今天 ${clock}` : `today ${clock}`;
  if (formatLocalDate(instantMs, zone) === formatLocalDate(nowMs + 86_400_000, zone)) return zh ? `明天 ${clock}` : `tomorrow ${clock}`;
  return `${formatLocalDate(instantMs, zone)} ${clock}`;
}

/** "15 min", "2 h 5 min", "3 days" (rounded to minutes). */
function describeDuration(ms: number, zh: boolean): string {
  const minutes = Math.max(1, Math.round(ms / 60_000));
  if (minutes < 60) return zh ? `${minutes} 分钟` : `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) {
    const rest = minutes % 60;
    if (zh) return rest ? `${hours} 小时 ${rest} 分钟` : `${hours} 小时`;
    return rest ? `${hours} h ${rest} min` : `${hours} h`;
  }
  const days = Math.round(hours / 24);
  return zh ? `${days} 天` : `${days} days`;
}
