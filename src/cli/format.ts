/** Small formatting helpers for human-readable CLI output. */

export function formatInt(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

/** 0.4567 → "45.7%". */
export function formatPercent(ratio: number): string {
  return `${(ratio * 100).toFixed(1)}%`;
}

/** A plain aligned text table. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(displayWidth(h), ...rows.map((r) => displayWidth(r[i] ?? ''))));
  const numeric = header.map((_, i) => rows.some((r) => r[i]) && rows.every((r) => !r[i] || NUMERIC_CELL.test(r[i]!.trim())));
  const pad = (c: string, i: number) => {
    const fill = ' '.repeat(Math.max(0, widths[i]! - displayWidth(c)));
    return numeric[i] ? fill + c : c + fill;
  };
  const line = (cells: string[]) => cells.map(pad).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** A number with an optional short unit ("1,035", "27.3 KiB", "−94.2%", "$0.0051"): right-aligned. */
const NUMERIC_CELL = /^[−+\-$]?\d[\d,.]*(?:\s?[%a-zA-Z]{1,4})?$/;

/**
 * Columns a string takes in a terminal: East Asian wide and full-width characters take two,
 * combining marks none, so tables with Chinese titles still line up.
 */
export function displayWidth(text: string): number {
  let width = 0;
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if ((c >= 0x300 && c <= 0x36f) || c === 0x200b || (c >= 0xfe00 && c <= 0xfe0f)) continue;
    const wide =
      (c >= 0x1100 && c <= 0x115f) ||
      (c >= 0x2e80 && c <= 0xa4cf && c !== 0x303f) ||
      (c >= 0xac00 && c <= 0xd7a3) ||
      (c >= 0xf900 && c <= 0xfaff) ||
      (c >= 0xfe30 && c <= 0xfe4f) ||
      (c >= 0xff00 && c <= 0xff60) ||
      (c >= 0xffe0 && c <= 0xffe6) ||
      (c >= 0x1f300 && c <= 0x1faff) ||
      (c >= 0x20000 && c <= 0x3fffd);
    width += wide ? 2 : 1;
  }
  return width;
}

/** A share removed, signed the way people read it: 0.4 → "−40.0%", −0.005 (it grew) → "+0.5%", 0 → "0.0%". */
export function formatReduction(ratio: number): string {
  if (Math.abs(ratio) < 0.0005) return formatPercent(0);
  return ratio > 0 ? `−${formatPercent(ratio)}` : `+${formatPercent(-ratio)}`;
}

/** US dollars, 4 decimals. */
export function formatUsd(usd: number): string {
  return `$${Math.abs(usd).toFixed(4)}`;
}

/** A cost that may come out negative (a saving): never printed with a minus sign. */
export function formatCost(usd: number): string {
  return usd >= 0 ? formatUsd(usd) : `none (saves ${formatUsd(usd)})`;
}

/** A saving that may come out negative (a cost): never printed with a minus sign. */
export function formatSaving(usd: number): string {
  return usd >= 0 ? formatUsd(usd) : `none (costs ${formatUsd(usd)} more)`;
}
