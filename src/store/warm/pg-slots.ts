/**
 * A counting semaphore: at most `size` holders at once, the rest wait in call order. The
 * PostgreSQL driver uses it to bound how many of its own transactions run concurrently.
 */

/** Hands out at most `size` slots at a time. */
export interface Slots {
  /** Waits for a free slot; call the returned function exactly once to give it back. */
  acquire(): Promise<() => void>;
}

/** Creates a semaphore with `size` slots (at least 1). */
export function createSlots(size: number): Slots {
  const limit = Math.max(1, Math.floor(size));
  let busy = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else busy--;
  };
  return {
    acquire() {
      let released = false;
      const once = () => {
        if (released) return;
        released = true;
        release();
      };
      if (busy < limit) {
        busy++;
        return Promise.resolve(once);
      }
      // The slot passes straight from the releaser to the next waiter, so `busy` stays put.
      return new Promise((resolve) => waiting.push(() => resolve(once)));
    },
  };
}
