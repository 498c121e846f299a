/**
 * Excerpts of long payloads are read from the ends of the text (stub.ts `excerptOfLong`): they must
 * be exactly what quoting every line gives, which `eagerExcerpt` below does the plain way.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { excerpt, type ExcerptShape } from './stub.js';

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
const ERROR_LINE = /\b(?:error|errors|failed|failure|fatal|exception|traceback|panic|denied|not found|cannot|could not|undefined reference|segmentation fault)\b|^E\s|✗|✘/i;

function lines(text: string, maxLine: number): string[] {
  const clean = text.includes('\u001b') ? text.replace(ANSI, '') : text;
  return clean
    .split('\n')
    .map((l) => l.replace(/\s+$/, ''))
    .filter((l) => l !== '')
    .map((l) => {
      const body = l.replace(/^\s+/, '');
      const squeezed = l.length - body.length > 8 ? `        ${body}` : l;
      return squeezed.length > maxLine ? `${squeezed.slice(0, maxLine)}…` : squeezed;
    });
}

function take(ls: string[], budget: number): string[] {
  const out: string[] = [];
  let left = budget;
  for (const l of ls) {
    if (l.length + 1 > left) {
      if (out.length === 0 && left >= 24) out.push(`${l.slice(0, left - 1)}…`);
      break;
    }
    out.push(l);
    left -= l.length + 1;
  }
  return out;
}

/** The excerpt as quoting every line gives it (the definition `excerpt` must match). */
function eagerExcerpt(text: string, chars: number, shape: ExcerptShape): string {
  if (chars < 24 || !text) return '';
  const all = lines(text, Math.max(24, Math.min(chars, 160)));
  if (all.length === 0) return '';
  const whole = all.join('\n');
  if (whole.length <= chars) return whole;
  const parts: string[] = [];
  let budget = chars;
  const err = all.findIndex((l) => ERROR_LINE.test(l));
  if (err !== -1) {
    const e = take([all[err]!], Math.min(budget, 160));
    parts.push(...e);
    budget -= e.join('\n').length + 1;
  }
  const rest = err === -1 ? all : all.filter((_, i) => i !== err);
  if (shape === 'head') parts.push(...take(rest, budget - 2), '…');
  else if (shape === 'tail') parts.push('…', ...take([...rest].reverse(), budget - 2).reverse());
  else {
    const head = take(rest, Math.floor(budget / 2) - 2);
    const tail = take([...rest.slice(head.length)].reverse(), budget - head.join('\n').length - 3).reverse();
    parts.push(...head, '…', ...tail);
  }
  return parts.join('\n');
}

const piece = fc.constantFrom(
  'ok\n',
  '\n',
  '   \n',
  '            deeply indented line\n',
  'Error: something failed\n',
  'E   assert x == y\n',
  'e lowercase start\n',
  'errorless word\n',
  'an errorX word\n',
  '\u001b[31mfail\u001b[0med red\n',
  '✗ test two\n',
  'x'.repeat(300) + ' error at the end of a long line\n',
  'y'.repeat(158) + 'error\n',
  // a keyword that ends where a long line is cut (at 160): the cut makes its closing boundary
  'y'.repeat(154) + ' errorX more\n',
  'plain text, nothing wrong here\n',
  '中文输出 第二行\n',
);
const longText = fc.oneof(
  fc.array(piece, { minLength: 1, maxLength: 2500 }).map((ps) => {
    let t = ps.join('');
    while (t.length <= 17 * 1024) t = `${t}filler line ${t.length}\n`;
    return t;
  }),
  // long, but few lines worth quoting: head and tail meet
  fc.tuple(fc.array(piece, { minLength: 1, maxLength: 8 }), fc.integer({ min: 17 * 1024, max: 40 * 1024 })).map(([ps, blank]) => ps.map((p, i) => (i === 1 ? `${'\n'.repeat(blank)}${p}` : p)).join('') + '\n'.repeat(ps.length < 2 ? blank : 0)),
);

describe('excerpts of long payloads', () => {
  it('are what quoting every line gives, for every shape and budget', () => {
    fc.assert(
      fc.property(longText, fc.integer({ min: 0, max: 400 }), fc.constantFrom<ExcerptShape>('head', 'tail', 'head-tail'), fc.boolean(), (text, chars, shape, trailing) => {
        const t = trailing ? text : text.trimEnd();
        expect(excerpt(t, chars, shape)).toBe(eagerExcerpt(t, chars, shape));
      }),
      { numRuns: 300 },
    );
  });

  it('find the error line however far down, and quote head and tail of what is left', () => {
    const text = `${'line of output\n'.repeat(5000)}fatal: the build broke\n${'more output\n'.repeat(5000)}`;
    const e = excerpt(text, 120, 'head-tail');
    expect(e).toBe(eagerExcerpt(text, 120, 'head-tail'));
    expect(e.startsWith('fatal: the build broke')).toBe(true);
  });
});
