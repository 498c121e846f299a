/**
 * The table the fault-injection suite prints (issue 23 point 9): per fault, what was tried, how
 * often, how many times the system held, and what was lost (the goal: nothing). Rows are added
 * by the scenarios as they run; `render()` lays them out as a Markdown table.
 */

export interface FaultRow {
  /** Which component, e.g. `hot tier (redis)`. */
  area: string;
  /** What was done to it, e.g. `kill -9 under 4 writers`. */
  fault: string;
  /** How many times. */
  tried: number;
  /** How many times the outcome was right (nothing lost, error caught, input refused). */
  held: number;
  /** What was lost or wrongly served, counted (`0 acknowledged messages`). */
  lost: string;
  /** Measured numbers worth a reader's attention (latency, throughput). */
  notes?: string;
}

export interface FaultTable {
  add(row: FaultRow): void;
  rows(): readonly FaultRow[];
  render(title: string): string;
}

export function createFaultTable(): FaultTable {
  const rows: FaultRow[] = [];
  return {
    add: (row) => void rows.push(row),
    rows: () => rows,
    render(title) {
      const header = ['area', 'fault', 'tried', 'held', 'lost', 'notes'];
      const body = rows.map((r) => [r.area, r.fault, String(r.tried), `${r.held}/${r.tried}`, r.lost, r.notes ?? '']);
      const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
      const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
      return [title, '', line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
    },
  };
}

/** A seeded PRNG (mulberry32), so a failing run can be repeated with the seed it printed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
