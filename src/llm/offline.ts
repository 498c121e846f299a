/**
 * The offline responder: a deterministic stand-in for an LLM, so `ctxvm chat`, the demo and every
 * test run without a network or an account. It answers from what the extractor read and from the
 * rebuilt context (the open-task layer for task questions), in the message's language.
 */
import { formatLocalClock, formatLocalDate } from '../memory/format-time.js';
import type { LlmCallback, LlmRequest } from './llm.js';

/** Creates the offline responder. */
export function createOfflineResponder(): LlmCallback {
  return async (request) => respondOffline(request);
}

/** The offline reply to one request (synchronous core of the responder). */
export function respondOffline(request: LlmRequest): string {
  const { extraction: x } = request;
  const zh = x.language === 'zh';
  if (x.clarification) return x.clarification;
  const title = x.task?.title ?? '';
  const due = x.task?.due != null ? describeDue(x.task.due, request) : '';
  switch (x.intent) {
    case 'create_task':
      return zh ? `好的，已记下任务「${title}」${due ? `，截止 ${due}` : ''}。` : `Got it: "${title}"${due ? `, due ${due}` : ''}.`;
    case 'complete_task':
      return zh ? `已将「${title}」标记为完成。` : `Marked "${title}" as done.`;
    case 'update_task':
      return zh ? `已更新任务「${title}」${due ? `，截止 ${due}` : ''}。` : `Updated "${title}"${due ? `, due ${due}` : ''}.`;
    case 'delete_task':
      return zh ? `已删除任务「${title}」。` : `Deleted "${title}".`;
    case 'query_tasks':
    case 'query_project': {
      const lines = request.context.layers.find((l) => l.name === 'tasks')?.items.map((i) => i.text.trim()) ?? [];
      if (lines.length === 0) return zh ? '目前没有待办任务。' : 'You have no open tasks.';
      return (zh ? `你还有 ${lines.length} 项待办：\n` : `You have ${lines.length} open task(s):\n`) + lines.join('\n');
    }
    case 'record_decision':
      return zh ? '好的，已记录这个决定。' : 'Noted the decision.';
    case 'record_fact':
      return zh ? '好的，我记住了。' : "Got it, I'll remember that.";
    case 'set_preference':
      return zh ? '好的，已更新你的偏好。' : 'Preference saved.';
    case 'recall': {
      const history = request.context.layers.find((l) => l.name === 'history')?.items ?? [];
      const memories = request.context.layers.find((l) => l.name === 'memories')?.items ?? [];
      const hit = [...memories, ...history][0];
      if (!hit) return zh ? '我没有找到相关的记录。' : "I couldn't find anything about that.";
      return (zh ? '我找到的相关记录：\n' : 'Here is what I found:\n') + hit.text.trim();
    }
    default:
      return zh ? '好的。' : 'OK.';
  }
}

function describeDue(dueMs: number, request: LlmRequest): string {
  const sameDay = formatLocalDate(dueMs, request.timeZone) === formatLocalDate(request.nowMs, request.timeZone);
  const clock = formatLocalClock(dueMs, request.timeZone);
  if (sameDay) return request.extraction.language === 'zh' ? `今天 ${clock}` : `today ${clock}`;
  return `${formatLocalDate(dueMs, request.timeZone)} ${clock}`;
}
