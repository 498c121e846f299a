/**
 * Candidates of the history layer: raw turns the full-text search finds, each with its
 * neighbours (the question before an answer, the answer after a statement), grouped by session
 * under a dated header and rendered in time order with the speaker.
 *
 * Ranking: the retrieval score of each hit (optionally damped for the k-th hit of one session);
 * a neighbour ranks at its hit's priority times `neighbourFactor` per turn of distance. Only the
 * best `fullHits` hits start in full: the rest, and all neighbours, start as their key sentence
 * and are upgraded if tokens are left, so more distinct turns fit before any is dropped. Two
 * neighbours each side and one full hit are LoCoMo's tune half's choice (docs/benchmarks.md).
 */
import type { SearchAnalyzer } from '../analyzer.js';
import type { SearchHit, SearchOptions, UserMemoryStore } from '../memory-store.js';
import type { Turn } from '../model.js';
import { keyAt, keyUnitOf, keyUnits, type KeyUnits } from './compress.js';
import type { ResolvedRebuildOptions } from './options.js';
import type { PackCandidate } from './pack.js';
import { inDateWindow, type QueryInfo } from './query.js';
import { formatLocalDate as formatDate, formatLocalTime as formatDateTime } from '../format-time.js';
import { instantKey, naturalKey, oneLine } from './render.js';
import { createTextMemo, type TextMemo } from '../../text/text-memo.js';
import { combine, decay, normaliseHits } from './score.js';

interface Scored {
  turn: Turn;
  priority: number;
  hit: boolean;
  rank: number;
}

/** Retrieves and ranks turns for `query`. */
export async function historyCandidates(
  store: UserMemoryStore,
  query: QueryInfo,
  o: ResolvedRebuildOptions,
  analyzer: SearchAnalyzer,
  turnHits?: readonly SearchHit[],
): Promise<PackCandidate[]> {
  const tuning = o.history;
  if (query.terms.size === 0 && !o.semantic) return [];
  const excluded = new Set(o.excludeTurnIds);
  const found = turnHits ?? (await store.search(query.text, turnSearch(o)));
  const hits = found.filter((h) => !excluded.has(h.id));
  if (hits.length === 0) return [];
  const fullText = normaliseHits(hits);
  const ids = hits.map((h) => h.id);
  const { before, after } = o.neighbourTurns;
  // The hits' neighbourhoods hold the hits themselves: one read for both when there are any.
  const around = before + after > 0 ? await neighbourhoods(store, ids, before, after) : undefined;
  const turns = around ? ids.flatMap((id) => around.get(id)?.filter((n) => n.id === id) ?? []) : await store.getTurns(ids);
  const entity = entitySignal(turns, query);
  const rendered = renderedTurnsOf(analyzer);
  const render = (turn: Turn) => renderedTurn(rendered, store.userId, turn, analyzer);
  // A turn is met several times (a hit, a neighbour of others): its group is worked out once.
  const groups = new Map<string, string>();
  const groupOf = (turn: Turn) => {
    let g = groups.get(turn.id);
    if (g === undefined) groups.set(turn.id, (g = groupKey(turn, o)));
    return g;
  };
  const ranked = turns
    .map((turn) => ({
      turn,
      order: render(turn).order,
      score: combine(
        {
          fullText: fullText.get(`turn:${turn.id}`) ?? 0,
          entity: entity(turn),
          recency: decay(o.scoreNowMs - turn.atMs, o.recencyHalfLifeMs),
        },
        o.weights,
      ),
    }))
    .sort((a, b) => b.score - a.score || (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));

  const byId = new Map<string, Scored>();
  const perSession = new Map<string, number>();
  // A turn reached twice (a hit and another hit's neighbour) keeps its best priority and is a hit.
  const keep = (s: Scored) => {
    const old = byId.get(s.turn.id);
    if (!old) return void byId.set(s.turn.id, s);
    old.priority = Math.max(old.priority, s.priority);
    if (s.hit && !old.hit) {
      old.hit = true;
      old.rank = s.rank;
    }
  };
  for (const [rank, { turn, score }] of ranked.entries()) {
    const session = groupOf(turn);
    const k = perSession.get(session) ?? 0;
    perSession.set(session, k + 1);
    const priority = score / (1 + tuning.sessionDamping * k);
    keep({ turn, priority, hit: true, rank });
    const near = around?.get(turn.id) ?? [];
    const self = near.findIndex((n) => n.id === turn.id);
    for (const [i, n] of near.entries()) {
      if (i === self || excluded.has(n.id) || groupOf(n) !== session) continue;
      keep({ turn: n, priority: priority * Math.pow(tuning.neighbourFactor, Math.abs(i - self)), hit: false, rank });
    }
  }

  const groupStart = new Map<string, number>();
  for (const { turn } of byId.values()) {
    const g = groupOf(turn);
    groupStart.set(g, Math.min(groupStart.get(g) ?? Infinity, turn.atMs));
  }
  const headers = groupHeaders(groupStart, o);
  const out: PackCandidate[] = [];
  for (const s of byId.values()) {
    const { turn } = s;
    const r = render(turn);
    const compact = r.key && compactLine(r, r.key, keyUnitOf(r.key, query.terms));
    const g = groupOf(turn);
    out.push({
      layer: 'history',
      kind: 'turn',
      id: turn.id,
      sources: [turn.id],
      full: r.full,
      ...(compact !== undefined ? { compact } : {}),
      priority: s.priority,
      preferCompact: !s.hit || s.rank >= tuning.fullHits,
      order: r.order,
      group: g,
      groupHeader: headers.get(g)!,
    });
  }
  return out;
}

/**
 * The header line of each group: its day and weekday ("## 2023-05-08 Mon"), with the time of
 * its first turn only when another candidate group starts the same day ("## 2023-05-08 13:56
 * Mon"), so that the headers still tell the sessions apart. A header per session is a tenth of
 * a history layer's tokens (LoCoMo at 2,000 tokens: ~18 headers of 14 tokens); the minutes cost
 * 4 of them and say nothing a day does not when a day has one session.
 */
function groupHeaders(groupStart: ReadonlyMap<string, number>, o: ResolvedRebuildOptions): Map<string, string> {
  const full = new Map<string, string>();
  const perDay = new Map<string, number>();
  for (const [g, atMs] of groupStart) {
    const text = formatDateTime(atMs, o.timeZone); // "2023-05-08 13:56 Mon"
    full.set(g, text);
    const day = text.slice(0, text.indexOf(' '));
    perDay.set(day, (perDay.get(day) ?? 0) + 1);
  }
  const out = new Map<string, string>();
  for (const [g, text] of full) {
    const day = text.slice(0, text.indexOf(' '));
    out.set(g, `## ${perDay.get(day)! > 1 ? text : `${day} ${text.slice(text.lastIndexOf(' ') + 1)}`}`);
  }
  return out;
}

/**
 * Entity signal of turns: the share of the query's entities (names, calendar dates) a turn has
 * (its speaker or text names the person; it was said within the date's window), each weighted
 * by how rare it is among the hits. In a chat between two people nearly every question names
 * one of them, and half the turns are theirs: such a name says little.
 */
function entitySignal(turns: readonly Turn[], query: QueryInfo): (turn: Turn) => number {
  const tests: Array<(t: Turn) => boolean> = [...query.names].map((name) => (t) => mentions(t, name));
  if (query.dateWindows.length > 0) tests.push((t) => inDateWindow(t.atMs, query));
  if (tests.length === 0 || turns.length === 0) return () => 0;
  const weight = tests.map((test) => 1 - turns.filter(test).length / turns.length);
  return (turn) => {
    let sum = 0;
    for (const [i, test] of tests.entries()) if (test(turn)) sum += weight[i]!;
    return sum / tests.length;
  };
}

function mentions(turn: Turn, name: string): boolean {
  return turn.speaker?.toLowerCase() === name || turn.text.toLowerCase().includes(name);
}

const ROLE_LABEL = { user: 'User', assistant: 'Assistant', system: 'System' } as const;

/**
 * A stored turn as the history layer renders it whatever the query: its full line, its key
 * sentence units, and the compact lines made so far. A user's turns come back rebuild after
 * rebuild as new objects read from the store; kept here, a turn is not split and analysed again,
 * and its lines are the same strings each time, so the packer's memo of line costs finds them
 * without hashing them anew.
 */
interface RenderedTurn {
  text: string;
  who: string;
  atMs: number;
  /** `turnOrder` of the turn. */
  order: string;
  full: string;
  key: KeyUnits | undefined;
  /** Compact line by the unit its key sentence is made around (null: none shorter). */
  compacts: Array<string | null | undefined>;
}

/**
 * Rendered turns held per analyzer (the terms depend on it), by user and turn id, oldest out
 * first, each weighed at about its bytes in the heap (measured: ~1.45 KB a turn of 127
 * characters with its lines, units and objects), up to ~32 MiB: ~22,000 such turns, three
 * quarters of what 200 users bring back by their ~70th message (bench/process-message-cpu.bench.mjs
 * with BENCH_PM_GROWTH).
 */
const RENDERED_TURN_BYTES = 32 << 20;
const renderedTurns = new WeakMap<SearchAnalyzer, TextMemo<RenderedTurn>>();

function renderedTurnsOf(analyzer: SearchAnalyzer): TextMemo<RenderedTurn> {
  let memo = renderedTurns.get(analyzer);
  if (!memo) renderedTurns.set(analyzer, (memo = createTextMemo<RenderedTurn>({ maxTotalChars: RENDERED_TURN_BYTES }, (r) => 4 * r.text.length + 1024)));
  return memo;
}

function renderedTurn(memo: TextMemo<RenderedTurn>, userId: string, turn: Turn, analyzer: SearchAnalyzer): RenderedTurn {
  const who = turn.speaker ?? ROLE_LABEL[turn.role];
  const id = `${userId}\u0000${turn.id}`;
  const known = memo.get(id);
  // (a user's turn does not change, but a user deleted and imported again may reuse its ids)
  if (known && known.text === turn.text && known.who === who && known.atMs === turn.atMs) return known;
  const body = oneLine(turn.text);
  const r: RenderedTurn = { text: turn.text, who, atMs: turn.atMs, order: turnOrder(turn), full: `${who}: ${body}`, key: keyUnits(body, analyzer), compacts: [] };
  if (!known) memo.set(id, r);
  return r;
}

/** The compact line around unit `best`, made once per turn and unit. */
function compactLine(r: RenderedTurn, units: KeyUnits, best: number): string | undefined {
  let line = r.compacts[best];
  if (line === undefined) {
    const key = keyAt(units, best);
    r.compacts[best] = line = key === undefined ? null : `${r.who}: ${key}`;
  }
  return line ?? undefined;
}

/** Session of a turn, or its calendar day when the source has no sessions. */
function groupKey(turn: Turn, o: ResolvedRebuildOptions): string {
  return turn.sessionId !== null ? `s:${turn.sessionId}` : `d:${formatDate(turn.atMs, o.timeZone)}`;
}

/** The history layer's search: turns, enough hits to leave `searchLimit` after the excluded ones. */
export function turnSearch(o: ResolvedRebuildOptions): SearchOptions {
  return { kinds: ['turn'], limit: o.searchLimit + new Set(o.excludeTurnIds).size };
}

/** Render and tie-break order of a turn: time, then natural id order. */
function turnOrder(turn: Turn): string {
  return `${instantKey(turn.atMs)}|${naturalKey(turn.id)}`;
}

/** `turnNeighbours` of every id, in one call when the store offers it. */
async function neighbourhoods(store: UserMemoryStore, ids: readonly string[], before: number, after: number): Promise<Map<string, Turn[]>> {
  if (store.turnNeighbourhoods) return store.turnNeighbourhoods(ids, before, after);
  const out = new Map<string, Turn[]>();
  for (const id of ids) out.set(id, await store.turnNeighbours(id, before, after));
  return out;
}
