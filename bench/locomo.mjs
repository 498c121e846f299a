// LoCoMo (../shared/corpus/locomo/locomo-dev.json, read at run time): its conversations as turns
// and its questions' evidence, shared by the benches that score retrieval on it.

export function locomoDate(text) {
  // "1:56 pm on 8 May, 2023"
  const m = /^(\d{1,2}):(\d{2})\s*(am|pm) on (\d{1,2}) (\w+),? (\d{4})$/i.exec(text.trim());
  if (!m) throw new Error(`locomo: unreadable session date ${JSON.stringify(text)}`);
  const months = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
  const month = months.indexOf(m[5].toLowerCase());
  if (month < 0) throw new Error(`locomo: unknown month in ${JSON.stringify(text)}`);
  const hour = (Number(m[1]) % 12) + (m[3].toLowerCase() === 'pm' ? 12 : 0);
  return Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]));
}

export function locomoTurns(conv) {
  const c = conv.conversation;
  const turns = [];
  for (let n = 1; c[`session_${n}_date_time`] !== undefined; n++) {
    const session = c[`session_${n}`];
    if (!Array.isArray(session)) continue;
    const atMs = locomoDate(c[`session_${n}_date_time`]);
    for (const t of session) {
      const caption = t.blip_caption ? ` [shares a photo: ${t.blip_caption}]` : '';
      turns.push({ id: t.dia_id, role: t.speaker === c.speaker_a ? 'user' : 'assistant', speaker: t.speaker, text: `${t.text}${caption}`, atMs, sessionId: `session_${n}` });
    }
  }
  return turns;
}

/** Evidence ids as released, repaired where the typo is unambiguous ("D:11:26", "D8:6; D9:17"). */
export function evidenceOf(qa) {
  const out = [];
  for (const raw of qa.evidence ?? []) {
    for (const part of String(raw).split(/[;,\s]+/)) {
      const m = /^D:?(\d+):(\d+)$/.exec(part);
      if (m) out.push(`D${m[1]}:${m[2]}`);
    }
  }
  return [...new Set(out)];
}

export const CATEGORY = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop', 5: 'adversarial' };
