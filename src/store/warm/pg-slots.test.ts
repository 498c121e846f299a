import { describe, expect, it } from 'vitest';
import { createSlots } from './pg-slots.js';

describe('createSlots', () => {
  it('lets `size` holders in at once, the others in call order', async () => {
    const slots = createSlots(2);
    const order: string[] = [];
    let running = 0;
    let peak = 0;
    const job = async (name: string, ms: number) => {
      const release = await slots.acquire();
      running++;
      peak = Math.max(peak, running);
      order.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, ms));
      running--;
      release();
      release(); // a second call is ignored
    };
    await Promise.all([job('a', 20), job('b', 5), job('c', 1), job('d', 1)]);
    expect(peak).toBe(2);
    expect(order).toEqual(['start a', 'start b', 'start c', 'start d']);
    const last = await slots.acquire();
    const other = await slots.acquire();
    last();
    other();
  });
});
