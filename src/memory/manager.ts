/**
 * MemoryManager: the DCMMS loop — extract, update, reset, rebuild, respond — over a warm store,
 * an optional hot cache and cold archive, and the user's LLM callback.
 */
import { idRandomBytes } from '../core/id-random.js';
import { systemClock, type Clock } from '../core/clock.js';
import { validateTimeZone, type TimeZone } from '../core/time-zone.js';
import { CtxvmError, UsageError } from '../errors.js';
import type { LlmCallback } from '../llm/llm.js';
import { createOfflineResponder } from '../llm/offline.js';
import type { HotCache } from '../store/hot-cache.js';
import type { TokenCounter } from '../text/tokens.js';
import { zoneId } from './format-time.js';
import { createTokenCounter } from '../text/tokens.js';
import { applyExtraction, WRITE_INTENTS, type AppliedChange } from './apply-extraction.js';
import type { RebuiltContext } from './context.js';
import { settleTentative, type Extraction, type ExtractOptions, type RecentEntity } from './extraction.js';
import type { MemoryStore, UserMemoryStore } from './memory-store.js';
import type { Turn } from './model.js';
import { createRecentEntities, type RecentEntities } from './recent-entities.js';
import { claimAbandoned, messageClaimOwner } from './message-claim.js';
import { checkRetry, MAX_MESSAGE_ID_LENGTH, repeatedMessage, replyTurnId, storedMessage } from './repeated-message.js';
import { createCachedMemoryStore, isCachedMemoryStore, type CachedMemoryStoreOptions, type ReadCacheStats } from './cached-memory-store.js';
import { createRefreshAhead, type RefreshAhead, type RefreshAheadOptions } from './cache/refresh-ahead.js';
import { embedAndStore, type EmbedItem, type SemanticRecall } from './semantic/semantic-recall.js';

/** Something that reads a message (the rule extractor, or the LLM extractor with rules as fallback). */
export interface MessageExtractor {
  extract(text: string, options: ExtractOptions): Extraction | Promise<Extraction>;
}

/** Options of one rebuild, as the manager passes them. */
export interface RebuildRequest {
  now: number;
  timeZone: TimeZone;
  budgetTokens: number;
  tokens: TokenCounter;
  cache?: HotCache;
  systemPrompt?: string;
  /** Turns to leave out of the history layer (the message being answered). */
  excludeTurnIds?: readonly string[];
  /** Record the records used as used (default true; false for a refresh-ahead rebuild). */
  touch?: boolean;
  /** Semantic recall, when the manager has it. */
  semantic?: SemanticRecall;
}

/** Builds the six-layer context for `query` (the rebuilder; injectable for tests and experiments). */
export type RebuildFn = (store: UserMemoryStore, query: string, request: RebuildRequest) => Promise<RebuiltContext>;

/** Options of `createMemoryManager`. */
export interface MemoryManagerOptions {
  /** The warm store (authoritative). */
  store: MemoryStore;
  /** Message reader (default: the rule extractor, Chinese and English). */
  extractor?: MessageExtractor;
  /** Context builder (default: the six-layer rebuilder). */
  rebuild?: RebuildFn;
  /** Hot tier for rebuild results, active-session state and cached warm reads (default: none). */
  hot?: HotCache;
  /**
   * Cache the warm reads of every turn (tasks, facts, projects, decisions, version) in `hot`;
   * options go to `createCachedMemoryStore`. Default: on when `hot` is set and a cached read can
   * save a round trip — the warm store is PostgreSQL, or the hot tier is shared (Redis, whose
   * generation tokens spare the warm query). Off for SQLite with the in-process hot tier: there
   * the cache checks the warm version on every batch anyway, and a SQLite read (~10–60 µs) costs
   * less than copying a value in and out of the cache (measured: processMessage 10–25% less CPU
   * without it, `node bench/process-message-cpu.bench.mjs`). `true` turns it on regardless.
   */
  cacheReads?: boolean | Omit<CachedMemoryStoreOptions, 'store' | 'hot'>;
  /** Cold archive of raw turns (default: none; turns are still kept in the warm store). */
  archive?: { append(userId: string, turns: readonly Turn[]): Promise<void> };
  /** Token counter (default o200k). */
  tokens?: TokenCounter;
  clock?: Clock;
  /** Zone used until the user states one (default "UTC"). */
  defaultTimeZone?: TimeZone;
  /** Context budget, tokens (default 2000). */
  budgetTokens?: number;
  /** Below this extraction confidence a write intent becomes a clarification question (default 0.6). */
  clarifyBelow?: number;
  /** System prompt of layer 1. */
  systemPrompt?: string;
  /**
   * Other processes write the same warm store (`ctxvm serve --workers N`; default false): keep
   * no per-process state that could go stale. The recently mentioned records are then the open
   * tasks as stored (most recently updated first), read on every message, and the full-history
   * token total is checked against the stored turn count on every message. (The hot-tier read
   * and rebuild caches are keyed by the warm version and need nothing.)
   */
  multiProcess?: boolean;
  /**
   * After a user's memory changes, rebuild the questions they ask most in the background so the
   * next request for one is served from the hot tier (./cache/refresh-ahead.ts). Default: on
   * when `hot` is set and reads go through the read cache (see `cacheReads`); `false` turns it off. Refreshes run
   * as of `clock.now()`.
   */
  refreshAhead?: boolean | RefreshAheadOptions;
  /**
   * Semantic recall (src/memory/semantic; default none): the turns and records a message writes
   * are embedded after it is answered, and rebuilds fuse the query's nearest vectors with the
   * full-text hits. A failing endpoint costs only that: see `SemanticRecall.onWarning`.
   */
  semantic?: SemanticRecall;
}

/** One incoming message. */
export interface IncomingMessage {
  userId: string;
  text: string;
  /**
   * Instant of the message (default: the clock): Unix ms, a `Date`, or ISO 8601 text with its
   * offset (`2026-03-10T09:00:00+08:00`, `…Z`).
   */
  now?: number | Date | string;
  /**
   * Id of the message, unique per user, stored as its user turn's id (default: generated). Makes
   * retries safe: a message is applied to memory once per id. Sent again once answered, it is
   * refused with `E_CONFLICT` (details: the stored turn ids and reply); sent again after its
   * reply failed, it is answered (`ProcessResult.resumed`) — see ./repeated-message.ts.
   */
  id?: string;
  /**
   * The user's time zone as the client knows it (`ctxvm chat --tz`, the API's `timeZone`). Stored
   * as the user's zone before the message is read, so its dates and every later output use it.
   */
  timeZone?: TimeZone;
}

/** Options of `buildContext`. */
export interface BuildContextOptions {
  /** Instant the context is built for, Unix ms (default: the clock). */
  now?: number;
  budgetTokens?: number;
  /** Zone of this context's dates and clock (default: the user's); not stored. */
  timeZone?: TimeZone;
}

/** Per-stage timings and token accounting of one processMessage call. */
export interface ProcessMetrics {
  /** Milliseconds per stage. */
  latencyMs: { extract: number; update: number; rebuild: number; respond: number; total: number };
  /** Tokens of the rebuilt context. */
  contextTokens: number;
  /** Tokens the whole raw history of this user would take as a prompt (every turn so far). */
  fullHistoryTokens: number;
  /** Whether the rebuild came from the hot cache. */
  rebuildCacheHit: boolean;
  /** Hot-cache hits/misses since the manager was created. */
  cacheHits: number;
  cacheMisses: number;
}

/** What processMessage returns. */
export interface ProcessResult {
  response: string;
  context: RebuiltContext;
  extraction: Extraction;
  /** Memory changes made by this message. */
  applied: AppliedChange[];
  /** True when the message was not applied and the response asks the user to clarify. */
  clarification: boolean;
  /** Ids of the stored user and assistant turns. */
  turnIds: { user: string; assistant: string };
  /**
   * True when an earlier call with the message's id stored it but got no reply (the LLM failed):
   * this call answered it and applied nothing (`applied` is empty; the earlier call applied it).
   */
  resumed: boolean;
  metrics: ProcessMetrics;
}

/** The memory engine's front door. */
export interface MemoryManager {
  /** Runs extract → update → reset → rebuild → respond for one message. */
  processMessage(message: IncomingMessage, llm?: LlmCallback): Promise<ProcessResult>;
  /** Rebuilds the context for `query` without storing anything (preview, `ctxvm memory context`). */
  buildContext(userId: string, query: string, options?: BuildContextOptions): Promise<RebuiltContext>;
  /** Stores raw turns (and extracts memory from user turns unless `extract: false`). */
  ingest(userId: string, turns: readonly IngestTurn[], options?: { extract?: boolean }): Promise<IngestResult>;
  /** The user's zone: their `timeZone` preference, else the default. */
  timeZoneOf(userId: string): Promise<TimeZone>;
  /**
   * Stores `zone` as the user's zone (the `timeZone` preference; history keeps the old one) unless
   * it is already theirs; returns it normalised. A UsageError names a zone that does not exist.
   */
  setTimeZone(userId: string, zone: TimeZone): Promise<TimeZone>;
  /** The door to one user's warm memory. */
  user(userId: string): UserMemoryStore;
  /** Background rebuilds after writes (undefined when off). */
  readonly refreshAhead: RefreshAhead | undefined;
  /**
   * Counters of the warm reads the hot tier answered (undefined without a read cache). Unlike the
   * hot cache's own counters, a value found but stale (written under an older memory version)
   * counts as a miss here: these say how many warm reads the cache saved.
   */
  readStats(): ReadCacheStats | undefined;
}

/** One turn to ingest (`ctxvm memory ingest` JSON lines). */
export interface IngestTurn {
  id?: string;
  role: Turn['role'];
  speaker?: string | null;
  text: string;
  /** Unix ms (default: the clock). */
  atMs?: number;
  sessionId?: string | null;
}

/** Counts of an ingest. */
export interface IngestResult {
  turns: number;
  added: number;
  applied: number;
  byIntent: Record<string, number>;
}

const DEFAULT_BUDGET = 2000;
/** Newest turns read per message to update a multi-process history token total. */
const HISTORY_PEEK = 8;
/** Open tasks a change that names no recently mentioned task is matched against. */
const WIDER_TASKS = 200;
const CHANGE_INTENTS: ReadonlySet<Extraction['intent']> = new Set(['complete_task', 'update_task', 'delete_task']);

/** Layer 1 when the caller gives none: tells the model what the rest of the prompt is. */
export const DEFAULT_SYSTEM_PROMPT =
  'You are a helpful assistant with long-term memory. The sections below are what you remember about the user: ' +
  'profile and preferences, the active project, open tasks with due times, and related earlier conversation. ' +
  'Use them to answer; do not invent tasks or facts that are not there. Reply in the language of the user.';

/**
 * Longest a message that changes no memory waits, ms, to be stored in one transaction with its
 * reply; past it, it is stored alone (see processMessage).
 */
export const PAIR_WAIT_MS = 50;

/** Creates a memory manager. The extractor and rebuilder load on first use. */
export function createMemoryManager(options: MemoryManagerOptions): MemoryManager {
  const clock = options.clock ?? systemClock;
  const defaultZone = validateTimeZone(options.defaultTimeZone ?? 'UTC');
  const clarifyBelow = options.clarifyBelow ?? 0.6;
  const budgetTokens = options.budgetTokens ?? DEFAULT_BUDGET;
  let tokens = options.tokens;
  const tokenCounter = () => (tokens ??= createTokenCounter());
  let extractor = options.extractor;
  let rebuild = options.rebuild;
  const recent: RecentEntities = createRecentEntities(options.hot, { keep: options.multiProcess !== true });
  const historyTokens = new Map<string, Promise<number>>();
  const countedHistory = new Map<string, { lastId: string; tokens: number }>();
  const store = withReadCache(options);
  // Versions read through the hot tier (generation tokens) cost no warm query when cached.
  const prefetchVersion = isCachedMemoryStore(store) && store.consistency === 'generation';
  const refreshAhead = startRefreshAhead();

  const getExtractor = async (): Promise<MessageExtractor> => (extractor ??= (await import('./extract/extract.js')).createRuleExtractor());
  const getRebuild = async (): Promise<RebuildFn> => (rebuild ??= (await import('./rebuild/index.js')).rebuildContext as RebuildFn);

  async function timeZoneOf(userId: string): Promise<TimeZone> {
    const pref = await user(userId).getFactByKey(TIME_ZONE_KEY);
    if (!pref) return defaultZone;
    try {
      return validateTimeZone(/^[+-]?\d+$/.test(pref.text) ? Number(pref.text) : pref.text);
    } catch {
      return defaultZone;
    }
  }

  async function setTimeZone(userId: string, zone: TimeZone): Promise<TimeZone> {
    const normalised = validateTimeZone(zone);
    const text = zoneId(normalised);
    const current = await user(userId).getFactByKey(TIME_ZONE_KEY);
    if (current?.text !== text) await user(userId).setFact({ kind: 'preference', key: TIME_ZONE_KEY, text, importance: 0.9, sourceTurnIds: [] });
    return normalised;
  }

  function user(userId: string): UserMemoryStore {
    return store.forUser(userId);
  }

  /** The user's store for a rebuild that answers a message (see contextFor). */
  function answeringUser(userId: string): UserMemoryStore {
    return store.forUser(userId, { cacheVolatileReads: false });
  }

  /** The user's store stamping what it writes with `atMs` (a message's own time). */
  function userAt(userId: string, atMs: number): UserMemoryStore {
    return store.forUser(userId, { atMs });
  }

  function startRefreshAhead(): RefreshAhead | undefined {
    const setting = options.refreshAhead ?? true;
    if (setting === false || !options.hot || !isCachedMemoryStore(store)) return undefined;
    const refresh = createRefreshAhead((userId, q) => contextFor(userId, q.query, { now: clock.now(), budgetTokens: q.budgetTokens, touch: false }), setting === true ? {} : setting);
    store.onWrite((userId) => refresh.wrote(userId));
    return refresh;
  }

  async function buildContext(userId: string, query: string, opts: BuildContextOptions = {}): Promise<RebuiltContext> {
    const timeZone = opts.timeZone !== undefined ? validateTimeZone(opts.timeZone) : undefined;
    const context = await contextFor(userId, query, { ...opts, ...(timeZone !== undefined ? { timeZone } : {}) });
    // (refreshed in the user's own zone: a context asked for in another one is not refreshed)
    if (timeZone === undefined) refreshAhead?.asked(userId, { query, budgetTokens: opts.budgetTokens ?? budgetTokens });
    return context;
  }

  async function contextFor(userId: string, query: string, opts: BuildContextOptions & { excludeTurnIds?: readonly string[]; touch?: boolean } = {}): Promise<RebuiltContext> {
    // A rebuild answering a message is followed by the reply's write, which retires whatever it
    // would cache of the searches and turn neighbourhoods it reads: they are not stored.
    const answering = opts.excludeTurnIds !== undefined && opts.excludeTurnIds.length > 0;
    const store = answering ? answeringUser(userId) : user(userId);
    const fn = await getRebuild();
    if (prefetchVersion) {
      // The rebuild's first read is the memory version (its cache key): asked for in the same
      // tick as the time zone, the read cache fetches both in one hot-tier call, or on a miss
      // both warm reads at once. The rebuild reads it again, from the cache, and reports failures.
      store.version().catch(() => undefined);
    }
    return fn(store, query, {
      now: opts.now ?? clock.now(),
      timeZone: opts.timeZone ?? (await timeZoneOf(userId)),
      budgetTokens: opts.budgetTokens ?? budgetTokens,
      tokens: tokenCounter(),
      // A rebuild that leaves out the message being answered is keyed by that message's turn id:
      // it can never be asked for again, so it is neither looked up nor stored.
      ...(options.hot && !answering ? { cache: options.hot } : {}),
      // Nor need its instant be rounded (rounding serves the cache): at the message's own instant,
      // the query's dates are the ones its extraction resolved a moment ago, and not parsed again.
      ...(answering ? { nowGranularityMs: 1 } : {}),
      systemPrompt: options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
      ...(opts.excludeTurnIds ? { excludeTurnIds: opts.excludeTurnIds } : {}),
      ...(opts.touch === false ? { touch: false } : {}),
      ...(options.semantic ? { semantic: options.semantic } : {}),
    });
  }

  /** Embeds what a message wrote (semantic recall); never throws (a failure is a warning). */
  async function embedWritten(userId: string, turns: readonly Omit<Turn, 'userId'>[], applied: readonly AppliedChange[]): Promise<void> {
    if (!options.semantic) return;
    const items: EmbedItem[] = turns.map((t) => ({ kind: 'turn', id: t.id, text: t.text }));
    for (const c of applied) if (c.action !== 'deleted') items.push({ kind: c.kind as EmbedItem['kind'], id: c.id, text: c.text });
    await embedAndStore(options.semantic, userId, items);
  }

  /** Tokens of all of a user's turns, computed once per process and kept up to date. */
  async function addHistoryTokens(userId: string, store: UserMemoryStore, texts: readonly string[]): Promise<number> {
    const counter = tokenCounter();
    if (options.multiProcess) {
      // Turns may come from other processes: add the turns stored after the newest one counted
      // (a short index walk); recount everything only the first time or after a long gap. Each
      // call works from its own snapshot, so concurrent calls agree.
      const known = countedHistory.get(userId);
      if (known) {
        const newest = await store.recentTurns(HISTORY_PEEK);
        const at = newest.findIndex((t) => t.id === known.lastId);
        if (at !== -1) {
          const tokens = known.tokens + newest.slice(at + 1).reduce((sum, t) => sum + counter.count(t.text), 0);
          countedHistory.set(userId, { lastId: newest[newest.length - 1]!.id, tokens });
          return tokens;
        }
      }
      const n = await store.countTurns();
      const all = n > 0 ? await store.recentTurns(n) : [];
      const tokens = all.reduce((sum, t) => sum + counter.count(t.text), 0);
      if (all.length > 0) countedHistory.set(userId, { lastId: all[all.length - 1]!.id, tokens });
      return tokens;
    }
    let base = historyTokens.get(userId);
    if (!base) {
      base = (async () => {
        const n = await store.countTurns();
        const all = n > 0 ? await store.recentTurns(n) : [];
        return all.reduce((sum, t) => sum + counter.count(t.text), 0);
      })();
      historyTokens.set(userId, base);
      const total = await base;
      return total; // the turns just added are already in the store, hence in the total
    }
    const total = (await base) + texts.reduce((sum, t) => sum + counter.count(t), 0);
    historyTokens.set(userId, Promise.resolve(total));
    return total;
  }

  /**
   * Extracts; when a change names a task that is not among the recently mentioned ones, reads it
   * again against every open task in the store, so "把写周报标记为完成" finds last week's task too.
   */
  async function extractResolved(text: string, opts: ExtractOptions, store: UserMemoryStore): Promise<Extraction> {
    return settleTentative(await extractAgainstTasks(text, opts, store));
  }

  async function extractAgainstTasks(text: string, opts: ExtractOptions, store: UserMemoryStore): Promise<Extraction> {
    const ex = await getExtractor();
    const first = await ex.extract(text, opts);
    if (!CHANGE_INTENTS.has(first.intent) || (first.target && first.target.confidence >= 0.95)) return first;
    // Only id, title and status are matched: the light read when the store has one.
    const open = store.openTaskTitles ? await store.openTaskTitles(WIDER_TASKS) : await store.listTasks({ status: ['todo', 'doing'], limit: WIDER_TASKS });
    const known = new Set((opts.recent ?? []).map((r) => r.id));
    if (!open.some((t) => !known.has(t.id))) return first;
    const wider: RecentEntity[] = [...(opts.recent ?? []), ...open.filter((t) => !known.has(t.id)).map((t) => ({ kind: 'task' as const, id: t.id, text: t.title, status: t.status }))];
    const second = await ex.extract(text, { ...opts, recent: wider });
    if (!second.target) return first;
    return !first.target || second.target.confidence > first.target.confidence ? second : first;
  }

  // Ids of messages this manager is processing now: a repeat arriving meanwhile is refused (the
  // first will answer it) without asking the warm store. Repeats sent to other processes find the
  // claim in the warm store (see ./message-claim.ts and ./repeated-message.ts).
  const inFlight = new Set<string>();
  const claimOwner = messageClaimOwner();

  async function processMessage(message: IncomingMessage, llm: LlmCallback = createOfflineResponder()): Promise<ProcessResult> {
    checkMessage(message);
    if (message.id === undefined) return processOnce(message, llm);
    const key = `${message.userId}\u0000${message.id}`;
    if (inFlight.has(key)) throw repeatedMessage(message.userId, message.id, null);
    inFlight.add(key);
    try {
      const claims = user(message.userId);
      const nowMs = clock.now();
      if (!(await claims.claimMessage(message.id, claimOwner, nowMs, (held) => claimAbandoned(held, { nowMs })))) throw repeatedMessage(message.userId, message.id, null);
      try {
        return await processOnce(message, llm);
      } finally {
        // a failed release leaves the claim until it is taken over (its age, or this pid gone)
        await claims.releaseMessage(message.id, claimOwner).catch(() => undefined);
      }
    } finally {
      inFlight.delete(key);
    }
  }

  async function processOnce(message: IncomingMessage, llm: LlmCallback): Promise<ProcessResult> {
    const t0 = performance.now();
    // A message id already stored: refused when it was answered, else answered now, as of when it
    // was said, without being applied to memory again (see ./repeated-message.ts).
    const prior = message.id !== undefined ? await storedMessage(user(message.userId), message.id) : undefined;
    if (prior) checkRetry(message.userId, message.text, prior);
    const resumed = prior !== undefined;
    const now = prior ? prior.message.atMs : (messageInstant(message.now) ?? clock.now());
    const store = userAt(message.userId, now);
    if (message.timeZone !== undefined && !resumed) await setTimeZone(message.userId, message.timeZone);
    const timeZone = await timeZoneOf(message.userId);

    // 1. extract
    const recentEntities = await recent.get(store);
    const extraction = await extractResolved(message.text, { now, timeZone, recent: recentEntities }, store);
    const t1 = performance.now();

    // 2. update. A message that changes memory is stored with the change, in one transaction (one
    // COMMIT; never the change without its turn), before the rebuild, which must see the change.
    // One that changes nothing (a question, chit-chat, a request to clarify) waits to be stored
    // with its reply, the pair in one transaction (one COMMIT and one full-text segment instead of
    // two; the rebuild leaves the message out anyway) — but only briefly: if the reply is not there
    // within PAIR_WAIT_MS (a real LLM takes seconds) the message is stored alone, so a process
    // dying during a slow call loses no message it has had for longer than that. A failure stores
    // it alone too, before the error is thrown.
    const userTurnId = message.id ?? newTurnId(now);
    const userTurn: Omit<Turn, 'userId'> = { id: userTurnId, role: 'user', speaker: null, text: message.text, atMs: now, sessionId: null };
    const unresolved = CHANGE_INTENTS.has(extraction.intent) && !extraction.target;
    const clarify = WRITE_INTENTS.has(extraction.intent) && (unresolved || extraction.confidence < clarifyBelow || extraction.clarification !== undefined);
    const changesMemory = !resumed && !clarify && WRITE_INTENTS.has(extraction.intent);
    // Stored before the reply: with its change, or by an earlier call with its id.
    const storedFirst = changesMemory || resumed;
    let applied: AppliedChange[] = [];
    if (changesMemory) {
      const stored = await addTurnWithChanges(store, userTurn, extraction, (added) => {
        // The same id sent twice at once: the other one stored it first (this rolls back).
        if (!added) throw repeatedMessage(message.userId, userTurnId, null);
      });
      applied = stored.changes;
    }
    // No hot-tier invalidation here: cached reads are retired by the writes themselves and cached
    // rebuilds are keyed by the memory version (invalidating the user would also drop the list
    // of recently mentioned records just remembered).
    if (applied.length) await recent.remember(store, applied.map(toRecent));
    const t2 = performance.now();

    // 3. reset: nothing of the raw chat is carried over; 4. rebuild from memory
    let storedAlone: Promise<unknown> | undefined;
    const storeAlone = () => (storedAlone ??= store.addTurns([userTurn]));
    // (The timer's write has no caller yet: its failure is reported where it is awaited, below.)
    const pairWait = storedFirst ? undefined : setTimeout(() => storeAlone().catch(() => undefined), PAIR_WAIT_MS);
    pairWait?.unref();
    /** Stores the message if it is not stored yet, before a failure is reported. */
    const storeUnansweredMessage = async () => {
      clearTimeout(pairWait);
      if (!storedFirst) await storeAlone();
    };
    let context: RebuiltContext;
    try {
      context = await contextFor(message.userId, message.text, { now, excludeTurnIds: [userTurnId] });
    } catch (error) {
      await storeUnansweredMessage();
      throw error;
    }
    const t3 = performance.now();

    // 5. respond
    const extractionForReply = clarify && !extraction.clarification ? { ...extraction, clarification: defaultClarification(extraction) } : extraction;
    let response: string;
    try {
      response = await llm({
        context,
        userMessage: message.text,
        messages: [
          { role: 'system', content: context.text },
          { role: 'user', content: message.text },
        ],
        extraction: extractionForReply,
        userId: message.userId,
        nowMs: now,
        timeZone,
      });
    } catch (cause) {
      await storeUnansweredMessage();
      throw new CtxvmError('E_LLM', `the LLM call failed for user ${JSON.stringify(message.userId)}: ${(cause as Error)?.message ?? String(cause)}`, {
        cause,
        hint:
          message.id === undefined
            ? 'the message and what was extracted from it are stored; retry the call (give the message an id to make retries safe)'
            : 'the message and what was extracted from it are stored; send it again with the same id to get its reply (it is not applied twice)',
      });
    }
    if (typeof response !== 'string') {
      await storeUnansweredMessage();
      throw new CtxvmError('E_LLM', `the LLM callback returned ${typeof response}, expected a string`);
    }
    const assistantTurnId = replyTurnId(userTurnId);
    const assistantTurn: Omit<Turn, 'userId'> = { id: assistantTurnId, role: 'assistant', speaker: null, text: response, atMs: now, sessionId: null };
    clearTimeout(pairWait);
    if (storedAlone) await storedAlone; // (only ever set for a message that changed nothing)
    const { added } = await store.addTurns(storedFirst || storedAlone ? [assistantTurn] : [userTurn, assistantTurn]);
    const answeredHere = added > 0;
    if (!answeredHere) {
      // Another call with this id stored its reply first: that one is the answer.
      const stored = message.id !== undefined ? await storedMessage(store, message.id) : undefined;
      if (stored?.reply) response = stored.reply.text;
    }
    // (the call that stores the reply archives the pair: an earlier call with the id did not get that far)
    if (options.archive && answeredHere) await options.archive.append(message.userId, [userTurn, assistantTurn].map((t) => ({ ...t, userId: message.userId })));
    if (answeredHere) await embedWritten(message.userId, [userTurn, assistantTurn], applied);
    const fullHistoryTokens = await addHistoryTokens(message.userId, store, answeredHere ? [message.text, response] : []);
    const t4 = performance.now();
    const stats = options.hot?.stats();
    return {
      response,
      context,
      extraction: extractionForReply,
      applied,
      clarification: clarify,
      turnIds: { user: userTurnId, assistant: assistantTurnId },
      resumed,
      metrics: {
        latencyMs: { extract: t1 - t0, update: t2 - t1, rebuild: t3 - t2, respond: t4 - t3, total: t4 - t0 },
        contextTokens: context.tokens,
        fullHistoryTokens,
        rebuildCacheHit: context.cached,
        cacheHits: stats?.hits ?? 0,
        cacheMisses: stats?.misses ?? 0,
      },
    };
  }

  async function ingest(userId: string, turns: readonly IngestTurn[], opts: { extract?: boolean } = {}): Promise<IngestResult> {
    const store = user(userId);
    const doExtract = opts.extract ?? true;
    const result: IngestResult = { turns: turns.length, added: 0, applied: 0, byIntent: {} };
    const timeZone = doExtract ? await timeZoneOf(userId) : defaultZone;
    const ex = doExtract ? await getExtractor() : undefined;
    // user turns stored before (an import run again) are not read again: a reader may be a paid
    // model call, and nothing read from such a turn is applied
    const storedBefore = ex ? new Set((await store.getTurns(turns.flatMap((t) => (t.role === 'user' && t.id !== undefined ? [t.id] : [])))).map((t) => t.id)) : undefined;
    for (const t of turns) {
      const atMs = t.atMs ?? clock.now();
      const turn: Omit<Turn, 'userId'> = { id: t.id ?? newTurnId(atMs), role: t.role, speaker: t.speaker ?? null, text: t.text, atMs, sessionId: t.sessionId ?? null };
      // A user turn is read before it is stored, so that one which changes memory is stored with
      // its change in one transaction, as processMessage stores a message: one COMMIT instead of
      // two (and half the pages written to the log for the change's version and index).
      // A failure to read or apply it is thrown once the turn is stored, archived and embedded,
      // as when turns were stored first.
      let failure: { error: unknown } | undefined;
      let x: Extraction | undefined;
      try {
        x = ex && t.role === 'user' && !storedBefore?.has(turn.id) ? await extractResolved(t.text, { now: atMs, timeZone, recent: await recent.get(store) }, store) : undefined;
      } catch (error) {
        failure = { error };
      }
      const applies = x !== undefined && WRITE_INTENTS.has(x.intent) && x.confidence >= clarifyBelow && !x.clarification;
      const stored = applies ? await storeWithChanges(userId, atMs, turn, x!) : { ...(await store.addTurns([turn])), changes: [] };
      const { added, changes } = stored;
      if ('failure' in stored) failure ??= stored.failure;
      result.added += added;
      if (options.archive && added) await options.archive.append(userId, [{ ...turn, userId }]);
      if (added) await embedWritten(userId, [turn], changes);
      if (failure) throw failure.error;
      // (a turn stored before is neither counted nor applied again)
      if (!x || !added) continue;
      result.byIntent[x.intent] = (result.byIntent[x.intent] ?? 0) + 1;
      if (changes.length) {
        result.applied++;
        await recent.remember(store, changes.map(toRecent));
      }
    }
    historyTokens.delete(userId);
    countedHistory.delete(userId);
    return result;
  }

  /**
   * Stores an ingested turn and applies what was extracted from it, in one transaction when the
   * store has them; nothing is applied for a turn stored before. If applying fails, the turn is
   * stored alone (as it would have been before its change) and the failure is returned with it,
   * for the caller to throw once it has done with the turn.
   */
  async function storeWithChanges(userId: string, atMs: number, turn: Omit<Turn, 'userId'>, x: Extraction): Promise<{ added: number; changes: AppliedChange[]; failure?: { error: unknown } }> {
    const store = userAt(userId, atMs);
    let turnStored = false;
    try {
      return await addTurnWithChanges(store, turn, x, () => void (turnStored = true));
    } catch (error) {
      // without transactions the turn is stored already; with them it was rolled back
      let added = 0;
      if (turnStored && !store.atomically) added = 1;
      else if (turnStored) {
        try {
          added = (await store.addTurns([turn])).added;
        } catch {
          // the first failure says what went wrong
        }
      }
      return { added, changes: [], failure: { error } };
    }
  }

  const readStats = (): ReadCacheStats | undefined => (isCachedMemoryStore(store) ? store.readStats() : undefined);

  return { processMessage, buildContext, ingest, timeZoneOf, setTimeZone, user, refreshAhead, readStats };
}

/**
 * Stores `turn` and applies `x`, read from it, in one transaction when `store` has them (one
 * COMMIT; never the change without its turn); nothing is applied for a turn stored before.
 * `stored(added)` runs once the turn is in, before anything is applied: it may throw, which rolls
 * the unit back.
 */
async function addTurnWithChanges(
  store: UserMemoryStore,
  turn: Omit<Turn, 'userId'>,
  x: Extraction,
  stored: (added: number) => void,
): Promise<{ added: number; changes: AppliedChange[] }> {
  const unit = async (s: UserMemoryStore) => {
    const { added } = await s.addTurns([turn]);
    stored(added);
    return { added, changes: added ? await applyExtraction(s, x, turn.id) : [] };
  };
  return store.atomically ? store.atomically(unit) : unit(store);
}

/** The store the manager reads through: `options.store`, behind a hot-tier read cache when there is one. */
function withReadCache(options: MemoryManagerOptions): MemoryStore {
  const { store, hot } = options;
  if (!hot || isCachedMemoryStore(store)) return store;
  const cacheReads = options.cacheReads ?? readCacheSaves(store, hot);
  if (cacheReads === false) return store;
  return createCachedMemoryStore({ ...(typeof cacheReads === 'object' ? cacheReads : {}), store, hot });
}

/** Whether a read cache in `hot` can answer faster than `store` itself (see `cacheReads`). */
export function readCacheSaves(store: MemoryStore, hot: HotCache): boolean {
  return store.driver !== 'sqlite' || hot.shared;
}

/** `IncomingMessage.now` as Unix ms; a usage error for anything that is not an instant. */
function messageInstant(now: IncomingMessage['now']): number | undefined {
  if (now === undefined) return undefined;
  const hint = 'pass Unix ms, a Date, or ISO 8601 text with an offset, e.g. 2026-03-10T09:00:00+08:00';
  if (typeof now === 'number') {
    if (Number.isFinite(now)) return now;
  } else if (now instanceof Date) {
    if (Number.isFinite(now.getTime())) return now.getTime();
  } else if (typeof now === 'string') {
    // text without an offset would be read in this machine's zone, which is rarely what was meant
    const ms = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(now.trim()) ? Date.parse(now) : NaN;
    if (Number.isFinite(ms)) return ms;
    throw new UsageError(`processMessage: now ${JSON.stringify(now)} is not ISO 8601 text with an offset`, { hint });
  }
  throw new UsageError('processMessage: now must be an instant', { hint });
}

function checkMessage(message: IncomingMessage): void {
  if (!message || typeof message !== 'object') throw new UsageError('processMessage: expected { userId, text }');
  if (typeof message.userId !== 'string' || message.userId.trim() === '') throw new UsageError('processMessage: userId must be a non-empty string');
  if (typeof message.text !== 'string') throw new UsageError('processMessage: text must be a string');
  if (message.text.trim() === '') throw new UsageError('processMessage: text is empty', { hint: 'send the user message text' });
  messageInstant(message.now);
  if (message.timeZone !== undefined) validateTimeZone(message.timeZone);
  if (message.id !== undefined && (typeof message.id !== 'string' || message.id.trim() === '' || message.id.length > MAX_MESSAGE_ID_LENGTH)) {
    throw new UsageError(`processMessage: id must be a non-empty string of at most ${MAX_MESSAGE_ID_LENGTH} characters`);
  }
}

/** Key of the fact that holds a user's zone. */
export const TIME_ZONE_KEY = 'timeZone';

function newTurnId(nowMs: number): string {
  return `t${nowMs.toString(36)}${idRandomBytes(4).toString('hex')}`;
}

function toRecent(change: AppliedChange): RecentEntity {
  return {
    kind: change.kind,
    id: change.id,
    text: change.text,
    ...(change.kind === 'task' ? { status: change.action === 'completed' ? 'done' : change.action === 'deleted' ? 'cancelled' : 'todo' } : {}),
  } as RecentEntity;
}

function defaultClarification(x: Extraction): string {
  const title = x.task?.title ?? x.memory?.text ?? '';
  if (CHANGE_INTENTS.has(x.intent) && !x.target) {
    return x.language === 'zh' ? `我没有找到和「${title}」对应的任务，你指的是哪个任务？` : `I couldn't find a task matching “${title}”. Which task do you mean?`;
  }
  return x.language === 'zh' ? `你指的是「${title}」吗？请再说得具体一点。` : `Do you mean “${title}”? Please say a little more.`;
}
