/** `ctxvm demo`'s memory section: the Chinese seed conversation through the real MemoryManager. */
import type { DemoSection } from './section.js';
import { renderMemoryDemo, runMemoryDemo, type MemoryDemoResult } from './memory-demo.js';

/** `ctxvm demo`'s memory section. */
export const memorySection: DemoSection<MemoryDemoResult> = {
  name: 'memory',
  title: 'Memory: extract → update → reset → rebuild → respond, per message',
  run: async (ctx) => runMemoryDemo(ctx.home, ctx.timeZone, ctx.nowMs),
  render: (r) => renderMemoryDemo(r).slice(1),
  problems: (r) => {
    const problems: string[] = [];
    const want = ['create_task', 'create_task', 'query_tasks', 'complete_task'];
    r.turns.forEach((t, i) => {
      if (t.intent !== want[i]) problems.push(`message ${i + 1}: read as ${t.intent}, expected ${want[i]}`);
      if (t.contextTokens <= 0) problems.push(`message ${i + 1}: empty context`);
    });
    if (!r.tasks.some((t) => t.status === 'done')) problems.push('no task was marked done');
    return problems;
  },
};
