/**
 * How old a line is, in model round trips, for both agents' trim plans: the first lines of the
 * round trips in file order split into the protected tail (the last K) and the rest.
 */

/** The protected tail's first line (the K-th last start) and the starts before it. */
export function splitTail(starts: number[], keepLastTurns: number): { from: number; turnStarts: number[] } {
  if (keepLastTurns <= 0 || starts.length === 0) return { from: Number.POSITIVE_INFINITY, turnStarts: starts };
  const k = Math.min(keepLastTurns, starts.length);
  return { from: starts[starts.length - k]!, turnStarts: starts.slice(0, starts.length - k) };
}

/**
 * How many round trips before the protected tail a line is: 0 for the last one before it, -1
 * inside the tail. A line belongs to the round trip that starts at or before it (a tool result
 * to the call it answers).
 */
export function roundTripAge(plan: { protectedFromLine: number; turnStarts: number[] }, line: number): number {
  if (line >= plan.protectedFromLine) return -1;
  const starts = plan.turnStarts;
  // round trips starting after `line` (binary search for the first start > line)
  let lo = 0;
  let hi = starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (starts[mid]! > line) hi = mid;
    else lo = mid + 1;
  }
  return Math.max(0, starts.length - lo - 1);
}
