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
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
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
