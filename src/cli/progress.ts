/**
 * Progress on long work: a single redrawn bar on stderr when stderr is a terminal, nothing
 * otherwise (so logs and pipes stay clean and --json output is never mixed with it).
 */

export interface Progress {
  /** Sets the amount done, in the same unit as `total`. */
  update(done: number): void;
  /** Clears the bar. */
  done(): void;
}

export interface ProgressOptions {
  label: string;
  /** Total amount of work (e.g. bytes), or 0 when unknown. */
  total: number;
  /** How `done`/`total` are shown (`share`: the bar alone). */
  unit?: 'bytes' | 'items' | 'share';
  /** Minimum time between redraws (ms, default 100). */
  intervalMs?: number;
  now?: () => number;
}

const silent: Progress = { update() {}, done() {} };

function formatAmount(n: number, unit: 'bytes' | 'items' | 'share'): string {
  if (unit === 'share') return '';
  if (unit === 'items') return String(n);
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Creates a progress bar on `stream` if it is a TTY, else a no-op. */
export function createProgress(stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }, options: ProgressOptions): Progress {
  if (!stream.isTTY) return silent;
  const now = options.now ?? Date.now;
  const unit = options.unit ?? 'bytes';
  const interval = options.intervalMs ?? 100;
  let last = 0;
  let drawn = false;
  const draw = (done: number) => {
    const width = Math.max(10, Math.min(40, (stream.columns ?? 80) - options.label.length - 30));
    const ratio = options.total > 0 ? Math.min(1, done / options.total) : 0;
    const filled = Math.round(ratio * width);
    const bar = options.total > 0 ? `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}%` : '';
    stream.write(`\r${options.label} ${bar} ${formatAmount(done, unit)}\x1b[K`);
    drawn = true;
  };
  return {
    update(done) {
      const t = now();
      if (t - last < interval) return;
      last = t;
      draw(done);
    },
    done() {
      if (drawn) stream.write('\r\x1b[K');
    },
  };
}
