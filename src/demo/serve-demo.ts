/**
 * `ctxvm demo --serve`: after the sections ran, the HTTP API and the web console over the demo's
 * own state — the generated session, its snapshots and trimmed branch (sessions section) and the
 * memory user (memory section) all live in the demo's temporary home, laid out as a ctxvm
 * installation: `ctxvm/` (CTXVM_HOME: ctxvm.db, objects/), `claude/`, `codex/`. An admin key is
 * created for the browser; the caller puts it in the console URL's fragment, which never reaches
 * the server.
 */
import { join } from 'node:path';
import type { TimeZone } from '../core/time-zone.js';

/** Options of `serveDemo`. */
export interface ServeDemoOptions {
  /** The demo's temporary folder (as the sections got it). */
  home: string;
  /** TCP port on 127.0.0.1; 0 picks a free one. */
  port: number;
  timeZone: TimeZone;
  /** Version reported by /healthz. */
  version: string;
  /** Folder of the built console (default: this package's dist/console/). */
  consoleDir?: string;
  /**
   * A message the server answers once over its own HTTP API before it is handed over, so the
   * console's metrics view (which counts since the server started) shows a served message.
   */
  firstMessage?: { userId: string; text: string; now: number };
}

/** A running demo server. */
export interface DemoServer {
  /** e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** The console with the admin key in the fragment: `<url>/console/#key=<key>`. */
  console: string;
  /** The admin key (printed once, in the console line). */
  key: string;
  /** Stops the server and closes the demo's stores (the caller removes the folder). */
  close(): Promise<void>;
}

/** The configuration of the demo's home, independent of the caller's environment. */
export function demoConfigEnv(home: string): Record<string, string> {
  return { CTXVM_HOME: join(home, 'ctxvm'), CLAUDE_CONFIG_DIR: join(home, 'claude'), CODEX_HOME: join(home, 'codex') };
}

/** Opens the demo's stores, creates an admin key and listens on 127.0.0.1. */
export async function serveDemo(options: ServeDemoOptions): Promise<DemoServer> {
  const [{ loadConfig }, { openServerServices }, { createHttpApp }, { listen }] = await Promise.all([
    import('../core/config.js'),
    import('../server/open-services.js'),
    import('../server/http.js'),
    import('../server/serve.js'),
  ]);
  // only the demo's folders: CTXVM_DB, CTXVM_REDIS and the user's agent homes are not consulted
  const config = loadConfig(demoConfigEnv(options.home), { homeDir: options.home, cwd: options.home });
  const services = await openServerServices({ config, timeZone: options.timeZone });
  try {
    // compute the snapshots' tokens now, so the tree shows them and the first analysis is instant
    const tree = await services.sessions.tree();
    for (const node of tree.nodes) if (node.kind === 'snapshot') await services.sessions.analyze(`snapshot:${node.id}`);
    const { key } = await services.keys.create({ admin: true, label: 'ctxvm demo --serve' });
    const { app } = createHttpApp(services, { version: options.version, ...(options.consoleDir ? { consoleDir: options.consoleDir } : {}) });
    const server = await listen(app, { host: '127.0.0.1', port: options.port });
    if (options.firstMessage) await postFirstMessage(server.url, key, options.firstMessage).catch(async (error: unknown) => {
      await server.close(2_000);
      throw error;
    });
    return {
      url: server.url,
      console: `${server.url}/console/#key=${key}`,
      key,
      async close() {
        await server.close(2_000);
        await services.close();
      },
    };
  } catch (error) {
    await services.close();
    throw error;
  }
}

/** POSTs `message` through the served API, as the console or a client would. */
async function postFirstMessage(url: string, key: string, message: { userId: string; text: string; now: number }): Promise<void> {
  const response = await fetch(`${url}/v1/users/${encodeURIComponent(message.userId)}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ text: message.text, now: message.now }),
  });
  if (!response.ok) throw new Error(`the demo server answered its first message with HTTP ${response.status}`);
  await response.arrayBuffer();
}
