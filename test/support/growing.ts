/**
 * Prefixes of a session file as it grows: cut at 10%, 20%, ... of its bytes, each moved forward
 * to the start of the next prompt the person typed, so every prefix is a session between turns
 * (no tool call waiting for its result) — what a snapshot taken between prompts captures.
 */

function isPromptLine(line: string): boolean {
  try {
    const v = JSON.parse(line) as { type?: string; isMeta?: boolean; isSidechain?: boolean; isCompactSummary?: boolean; message?: { content?: unknown } };
    if (v.type !== 'user' || v.isMeta || v.isSidechain || v.isCompactSummary) return false;
    const c = v.message?.content;
    if (typeof c === 'string') return !c.startsWith('<');
    return Array.isArray(c) && c.length > 0 && c.every((b: { type?: string }) => b?.type === 'text' || b?.type === 'image');
  } catch {
    return false;
  }
}

/** `steps` growing prefixes of `data`, each ending just before a prompt line (the last is all of it). */
export function growingPrefixes(data: Buffer, steps = 10): Buffer[] {
  const out: Buffer[] = [];
  for (let k = 1; k < steps; k++) {
    let at = data.lastIndexOf(0x0a, Math.floor((data.length * k) / steps)) + 1;
    while (at < data.length) {
      const end = data.indexOf(0x0a, at);
      const line = data.toString('utf8', at, end === -1 ? data.length : end);
      if (isPromptLine(line)) break;
      at = end === -1 ? data.length : end + 1;
    }
    out.push(data.subarray(0, at));
  }
  out.push(data);
  return out;
}
