/**
 * A small, deterministic, realistic Claude Code transcript for `ctxvm demo`: prompts, split
 * assistant replies with thinking, parallel tool calls with bulky results and their
 * `toolUseResult` duplicates, a screenshot, file-history metadata and a compaction. It lets the
 * demo run offline on a fresh install, without the shared corpus.
 */
import { createHash } from 'node:crypto';

export interface DemoSessionOptions {
  sessionId?: string;
  cwd?: string;
  /** Conversation turns (user prompts), default 6. */
  turns?: number;
  /** Start time, Unix ms. */
  startMs?: number;
}

function uuidFrom(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const FILE_LINES = [
  "import { createServer } from 'node:http';",
  "import { loadConfig } from './config.js';",
  '',
  'export function start(port = 8080) {',
  '  const config = loadConfig(process.env);',
  '  const server = createServer((req, res) => {',
  "    if (req.url === '/healthz') return res.end('ok');",
  '    res.statusCode = 404;',
  "    res.end('not found');",
  '  });',
  '  return server.listen(port);',
  '}',
];

function fileListing(path: string, copies: number): string {
  const out: string[] = [];
  for (let i = 0; i < copies; i++) for (const [n, l] of FILE_LINES.entries()) out.push(`${String(i * FILE_LINES.length + n + 1).padStart(6)}→${l.replace('start', `start${i}`)}`);
  return `${path}\n${out.join('\n')}`;
}

function testOutput(failures: number): string {
  const lines = [' RUN  v4.1.12 /work/app', ''];
  for (let i = 0; i < 60; i++) lines.push(` ✓ test/unit-${i}.test.ts (${(i % 7) + 2} tests) ${20 + i}ms`);
  for (let i = 0; i < failures; i++) lines.push(` × test/server.test.ts > returns 404 for unknown paths (case ${i})`, '   AssertionError: expected 500 to be 404');
  lines.push('', ` Test Files  ${failures ? `${failures} failed | ` : ''}60 passed (60)`, `      Tests  ${failures ? `${failures} failed | ` : ''}${300 - failures} passed`);
  return lines.join('\n');
}

// a PNG that says it is 1280x800, a screenshot's size (~1,400 tokens: worth paging out), grey
const PNG_BASE64 = (() => {
  const header = Buffer.from('89504e470d0a1a0a0000000d4948445200000500000003200802000000', 'hex');
  return Buffer.concat([header, Buffer.alloc(6000, 0x7f)]).toString('base64');
})();

/** Builds the transcript as JSON lines (one string per line, without newlines). */
export function buildDemoClaudeSession(options: DemoSessionOptions = {}): string[] {
  const sessionId = options.sessionId ?? uuidFrom('ctxvm-demo-session');
  const cwd = options.cwd ?? '/home/demo/app';
  const turns = options.turns ?? 7;
  let clock = options.startMs ?? Date.UTC(2026, 10, 30, 9, 0, 0);
  let n = 0;
  let parent: string | null = null;
  const lines: string[] = [];
  const base = () => ({ isSidechain: false, userType: 'external', cwd, sessionId, version: '2.1.14', gitBranch: 'main' });
  const stamp = () => new Date((clock += 1500)).toISOString();
  const push = (line: Record<string, unknown>, link = true) => {
    lines.push(JSON.stringify(line));
    if (link && typeof line.uuid === 'string') parent = line.uuid;
  };
  const user = (content: unknown, extra: Record<string, unknown> = {}) => {
    const uuid = uuidFrom(`u${n++}`);
    push({ parentUuid: parent, ...base(), type: 'user', message: { role: 'user', content }, uuid, timestamp: stamp(), ...extra });
    return uuid;
  };
  const assistant = (msgId: string, block: Record<string, unknown>) => {
    const uuid = uuidFrom(`a${n++}`);
    push({ parentUuid: parent, ...base(), message: { model: 'claude-sonnet-4-5-20250929', id: msgId, type: 'message', role: 'assistant', content: [block], stop_reason: null, usage: { input_tokens: 10, output_tokens: 50 } }, requestId: `req_${n}`, type: 'assistant', uuid, timestamp: stamp() });
    return uuid;
  };
  const prompts = [
    'The server returns 500 instead of 404 for unknown paths. Can you find out why and fix it?',
    'Good. Now add a test for the /healthz endpoint and run the whole suite.',
    'Here is a screenshot of the dashboard after the change — does the layout look right to you?',
    'Refactor config loading so PORT comes from the environment, then run the tests again.',
    '请把修改总结一下，写进 CHANGELOG.md。',
    'Thanks. Anything else you would clean up before we merge?',
  ];
  for (let t = 0; t < turns; t++) {
    lines.push(JSON.stringify({ type: 'file-history-snapshot', messageId: uuidFrom(`fh${t}`), snapshot: { messageId: uuidFrom(`fh${t}`), trackedFileBackups: { 'src/server.ts': { backupFileName: `${uuidFrom(`b${t}`)}@v${t + 1}`, version: t + 1, backupTime: new Date(clock).toISOString() } }, timestamp: new Date(clock).toISOString() }, isSnapshotUpdate: false }));
    const prompt = prompts[t % prompts.length]!;
    if (t === 2) user([{ type: 'text', text: prompt }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } }]);
    else user(prompt);
    const msg = `msg_demo_${t}`;
    assistant(msg, { type: 'thinking', thinking: `Turn ${t + 1}: I should look at the server code and the tests before changing anything. `.repeat(6), signature: Buffer.from(`sig${t}`).toString('base64').repeat(8) });
    assistant(msg, { type: 'text', text: t === 4 ? '好的，我来总结这些修改。' : `Let me look at the relevant files first (step ${t + 1}).` });
    const readId = `toolu_demo_read_${t}`;
    const bashId = `toolu_demo_bash_${t}`;
    const readLine = assistant(msg, { type: 'tool_use', id: readId, name: 'Read', input: { file_path: `${cwd}/src/server.ts` } });
    const bashLine = assistant(msg, { type: 'tool_use', id: bashId, name: 'Bash', input: { command: 'npm test', description: 'Run the test suite' } });
    // parallel results: each hangs under its own call
    parent = readLine;
    const listing = fileListing(`${cwd}/src/server.ts`, 12);
    user([{ tool_use_id: readId, type: 'tool_result', content: listing }], { toolUseResult: { type: 'text', file: { filePath: `${cwd}/src/server.ts`, content: listing, numLines: 144, startLine: 1, totalLines: 144 } } });
    const readResult = parent;
    parent = bashLine;
    const out = testOutput(t < 2 ? 1 : 0);
    user([{ tool_use_id: bashId, type: 'tool_result', content: out, is_error: t < 1 }], { toolUseResult: { stdout: out, stderr: '', interrupted: false, isImage: false } });
    void readResult;
    assistant(`msg_demo_${t}_b`, { type: 'text', text: t === 0 ? 'Found it: the handler throws before it sets the status code. I changed `res.statusCode = 404` to run first.' : t === 4 ? '已写入 CHANGELOG.md：修复 404、加入 /healthz 测试、PORT 从环境变量读取。' : `Done with step ${t + 1}; the suite passes.` });
    lines.push(JSON.stringify({ parentUuid: parent, ...base(), type: 'system', subtype: 'turn_duration', durationMs: 42_000, timestamp: stamp(), uuid: uuidFrom(`s${n++}`), isMeta: false }));
    if (t === 1) {
      // a compaction: everything before it is summarised
      const boundary = uuidFrom(`cb${t}`);
      push({ parentUuid: null, logicalParentUuid: parent, ...base(), type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', isMeta: false, timestamp: stamp(), uuid: boundary, level: 'info', compactMetadata: { trigger: 'auto', preTokens: 48_000 } });
      user('This session is being continued from a previous conversation that ran out of context. Summary: fixed the 404 bug in src/server.ts, added a /healthz test, made PORT configurable; all tests pass.', { isCompactSummary: true, isVisibleInTranscriptOnly: true });
    }
  }
  return lines;
}

/** Options of `continueDemoClaudeSession`. */
export interface DemoContinuationOptions {
  /** Lines of the session being continued (the leaf is its last line with a `uuid`). */
  lines: readonly string[];
  /** The prompt the person types, and the model's reply. */
  prompt: string;
  reply: string;
  /** Time of the prompt, Unix ms (the reply follows 2 s later). */
  atMs: number;
}

/**
 * Two more lines for a session, as Claude Code would append them when the person resumes it and
 * asks one more thing: a prompt chained to the current leaf, and the reply. Session id, cwd and
 * version are taken from the leaf line, so this continues a branch (new ids) as well.
 */
export function continueDemoClaudeSession(options: DemoContinuationOptions): string[] {
  let leaf: Record<string, unknown> | undefined;
  for (let i = options.lines.length - 1; i >= 0 && !leaf; i--) {
    const v = JSON.parse(options.lines[i]!) as Record<string, unknown>;
    if (typeof v.uuid === 'string') leaf = v;
  }
  if (!leaf) throw new Error('continueDemoClaudeSession: the session has no message lines');
  const base = { isSidechain: false, userType: 'external', cwd: leaf.cwd, sessionId: leaf.sessionId, version: leaf.version, gitBranch: leaf.gitBranch };
  const seed = `${String(leaf.uuid)}:${options.prompt}`;
  const userUuid = uuidFrom(`${seed}:u`);
  const assistantUuid = uuidFrom(`${seed}:a`);
  return [
    JSON.stringify({ parentUuid: leaf.uuid, ...base, type: 'user', message: { role: 'user', content: options.prompt }, uuid: userUuid, timestamp: new Date(options.atMs).toISOString() }),
    JSON.stringify({
      parentUuid: userUuid,
      ...base,
      message: { model: 'claude-sonnet-4-5-20250929', id: `msg_demo_${assistantUuid.slice(0, 8)}`, type: 'message', role: 'assistant', content: [{ type: 'text', text: options.reply }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 20 } },
      requestId: `req_${assistantUuid.slice(0, 8)}`,
      type: 'assistant',
      uuid: assistantUuid,
      timestamp: new Date(options.atMs + 2000).toISOString(),
    }),
  ];
}
