// Where ctxvm's trim keeps tokens the reference's removes, and the reverse: for every main Claude
// Code session of ../shared/corpus/sessions, the contexts after both trims (the reconstruction
// trim-reduction.mjs counts), compared message by message and split by what the tokens are (tool
// results, inputs, images, the parts of the stubs: header, excerpt, page-in legend, reason) and
// where they are (the protected last round trip, "tail", or older). Both trims keep the messages,
// so the contexts align by position. Positive = ctxvm keeps more. Prints, per half, the mean of
// the per-session differences as points of the session's original tokens (what the mean
// reduction is made of), and with BENCH_GAP_SESSIONS=1 every session's differences in tokens.
// Then what stays in ctxvm's output, the same way, with tool inputs by tool and field: what both
// trims keep (commands, paths) shows only there.
//
//   node bench/trim-gap.mjs                       # the default policy
//   BENCH_TRIM_POLICY='{"keepErrors":false}' node bench/trim-gap.mjs
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { mainSessionFiles, root, sharedDir, table } from './lib.mjs';
import { halfOf } from './trim-reduction.mjs';

const policy = process.env.BENCH_TRIM_POLICY ? JSON.parse(process.env.BENCH_TRIM_POLICY) : undefined;
const corpus = join(sharedDir, 'corpus', 'sessions', 'claude-code');
const referencePath = join(sharedDir, 'reference', 'claude-code-cmv', 'dist', 'core', 'trimmer.js');
if (!existsSync(corpus) || !existsSync(referencePath)) {
  console.log(`trim gap: skipped (needs ${corpus} and ${referencePath})`);
  process.exit(0);
}
const api = await import(join(root, 'dist', 'index.js'));
const reference = (await import(pathToFileURL(referencePath).href)).trimJsonl;
const counter = api.createTokenCounter();

const isStub = (text) => text.startsWith('[ctxvm paged out') || text.startsWith('[Trimmed');
const INPUT_STUB = /\[ctxvm paged out[^\]]*\](?:\\n[^"]*)?|\[Trimmed input: ~\d+ chars\]/g;

/** Tokens of one part of an entry, as the context counts them. */
function tokensOfPart(ctx, entry, part) {
  return api.countContextTokens({ agent: ctx.agent, entries: [{ role: entry.role, line: entry.line, parts: [part] }] }, counter).tokens;
}

/** What an entry's tokens are, by kind: the context's categories, with stubs split into their parts. */
function kindsOf(ctx, entry) {
  const kinds = {};
  const add = (k, n) => n && (kinds[k] = (kinds[k] ?? 0) + n);
  for (const part of entry.parts) {
    const tokens = tokensOfPart(ctx, entry, part);
    if (part.category === 'toolInput') {
      const stubs = (part.text.match(INPUT_STUB) ?? []).reduce((n, s) => n + counter.count(s), 0);
      add('input stubs', stubs);
      add('toolInput', tokens - stubs);
    } else if ((part.category === 'toolResult' || part.category === 'userText') && isStub(part.text)) {
      const nl = part.text.indexOf('\n');
      let header = nl < 0 ? part.text : part.text.slice(0, nl);
      const excerpt = nl < 0 ? 0 : counter.count(part.text.slice(nl));
      let notes = 0;
      for (const [kind, marker] of [['stub legend', ' · page in:'], ['stub reason', ' · superseded']]) {
        const at = header.indexOf(marker);
        if (at < 0) continue;
        const n = counter.count(header.slice(at));
        add(kind, n);
        notes += n;
        header = header.slice(0, at);
      }
      add('stub excerpt', excerpt);
      add('stub header', tokens - excerpt - notes);
    } else add(part.category, tokens);
  }
  return kinds;
}

/** Adds a tool input's fields (`Bash.command`, …) to `into`, as shares of `total`; stubs apart. */
function inputFields(text, into, total) {
  const space = text.indexOf(' ');
  const tool = text.slice(0, space).replace(/^mcp__.*/, 'mcp');
  for (const [field, value] of Object.entries(JSON.parse(text.slice(space + 1)))) {
    const v = typeof value === 'string' ? value : JSON.stringify(value);
    const key = `input ${tool}.${field}${isStub(v) ? ' (stub)' : ''}`;
    into[key] = (into[key] ?? 0) + counter.count(v) / total;
  }
}

/** Index of the first entry of the protected last round trip (the last reply the file holds). */
function tailStart(entries) {
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i].role === 'assistant' && !entries[i].injected) return i;
  return entries.length;
}

const dir = mkdtempSync(join(tmpdir(), 'ctxvm-bench-gap-'));
const store = api.createFsObjectStore({ root: join(dir, 'objects') });
const perHalf = { tune: { n: 0, points: {} }, check: { n: 0, points: {} } };
const kept = { tune: {}, check: {} };
const sessions = [];
try {
  for (const file of mainSessionFiles(corpus)) {
    const half = halfOf(relative(corpus, file).split('/')[0]);
    perHalf[half].n++;
    const original = (await api.loadSession(file)).context;
    const before = api.countContextTokens(original, counter).tokens;
    if (!before) continue;
    const mine = join(dir, 'ctxvm.jsonl');
    const theirs = join(dir, 'reference.jsonl');
    await api.trimSession({ input: file, output: mine, store, measure: false, ...(policy ? { policy } : {}) });
    await reference(file, theirs, { threshold: 500 });
    const [a, b] = [(await api.loadSession(mine)).context, (await api.loadSession(theirs)).context];
    const diff = {};
    if (a.entries.length !== b.entries.length) throw new Error(`${file}: the trims' contexts have ${a.entries.length} and ${b.entries.length} messages`);
    const tail = tailStart(original.entries);
    a.entries.forEach((entry, i) => {
      const [ka, kb] = [kindsOf(a, entry), kindsOf(b, b.entries[i])];
      for (const kind of new Set([...Object.keys(ka), ...Object.keys(kb)])) {
        const d = (ka[kind] ?? 0) - (kb[kind] ?? 0);
        if (!d) continue;
        // kept more (+) and removed more (−) apart, so that they do not cancel out
        const key = `${kind} ${d > 0 ? '+' : '−'}${i >= tail ? ' (tail)' : ''}`;
        diff[key] = (diff[key] ?? 0) + d;
        perHalf[half].points[key] = (perHalf[half].points[key] ?? 0) + d / before;
      }
    });
    sessions.push({ half, session: relative(corpus, file).slice(0, 60), tokens: before, diff });
    for (const entry of a.entries) {
      for (const [kind, n] of Object.entries(kindsOf(a, entry))) if (kind !== 'toolInput') kept[half][kind] = (kept[half][kind] ?? 0) + n / before;
      for (const part of entry.parts) if (part.category === 'toolInput') inputFields(part.text, kept[half], before);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

if (process.env.BENCH_GAP_SESSIONS) {
  for (const s of sessions) {
    const parts = Object.entries(s.diff).sort((x, y) => y[1] - x[1]).map(([k, v]) => `${k} ${v}`);
    console.log(`${s.half} ${s.session} (${s.tokens} tokens): ${parts.join(', ') || 'the same'}`);
  }
}
const kinds = [...new Set(Object.values(perHalf).flatMap((h) => Object.keys(h.points)))].sort();
console.log(`\nctxvm minus the reference (${policy ? `policy ${JSON.stringify(policy)}` : 'default policy'}), mean points of each session's original tokens; + = ctxvm keeps more`);
table(kinds.map((kind) => ({ kind, ...Object.fromEntries(Object.entries(perHalf).map(([h, v]) => [h, ((v.points[kind] ?? 0) / v.n * 100).toFixed(2)])) })));
const largest = Object.fromEntries(['tune', 'check'].map((h) => [h, Object.entries(kept[h]).sort((x, y) => y[1] - x[1]).slice(0, 14)]));
console.log('\nWhat stays in ctxvm\'s output, mean points of each session\'s original tokens (the largest)');
table(
  largest.tune.map((_, i) => {
    const row = {};
    for (const h of ['tune', 'check']) {
      const [kind, share] = largest[h][i] ?? ['', undefined];
      row[h] = kind;
      row[`${h} points`] = share === undefined ? '' : ((share / perHalf[h].n) * 100).toFixed(2);
    }
    return row;
  }),
);
