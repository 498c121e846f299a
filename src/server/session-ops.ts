/**
 * The session operations both edges (HTTP and MCP) offer: list, snapshot, branch, trim
 * (snapshot + trimmed branch, the original untouched), page-in, the DAG and the analysis
 * (session-analysis.ts). Sessions are machine-wide, so the HTTP edge allows them to admin keys
 * only. Page-in goes through `pageIn`, which owns the
 * reference format and the object layout.
 */
import { branchJson } from '../session/dag/branch-json.js';
import { join } from 'node:path';
import type { z } from 'zod';
import type { AgentKind } from '../session/context-model.js';
import type { SessionCatalog } from '../session/dag/catalog.js';
import type { DiscoveredSession } from '../session/discovery/discover.js';
import type { ObjectStore } from '../store/object-store.js';
import type { DagEdge, DagNode } from '../session/dag/tree.js';
import { createSessionAnalyser, type AnalysisJson } from './session-analysis.js';
import { createSessionsEconomist, type EconomicsJson } from './session-economics.js';
import type { BranchBody, SnapshotBody, TrimBody } from './schemas.js';

/** Where the agents and ctxvm keep their files. */
export interface SessionRoots {
  /** `$CLAUDE_CONFIG_DIR`. */
  claudeConfigDir: string;
  /** `$CODEX_HOME`. */
  codexHome: string;
  /** `$CTXVM_HOME` (scratch copies go to `<home>/tmp`). */
  home: string;
}

/** A snapshot as the API returns it. */
export interface SnapshotJson {
  id: string;
  name: string;
  bytes: number;
  files: number;
  objects: number;
  newObjects: number;
  session: { agent: AgentKind; id: string; path: string };
}

/** A paged-in payload as the API returns it. */
export interface PageInJson {
  ref: string;
  hash: string;
  pointer: string;
  kind: 'text' | 'json';
  content: unknown;
  /** The payload as a string ready to print (not in the HTTP body; MCP sends it as the text). */
  text: string;
  /** The trimmed session file a reference by call id was found in. */
  file?: string;
  /** Whether a digest recorded at trim time vouched for the payload's line. */
  verified: boolean;
}

/** The session operations of one server. */
export interface SessionOps {
  list(filter?: { agent?: AgentKind; project?: string }): Promise<DiscoveredSession[]>;
  snapshot(body: z.infer<typeof SnapshotBody>): Promise<SnapshotJson>;
  branch(body: z.infer<typeof BranchBody>): Promise<ReturnType<typeof branchJson>>;
  /** Snapshot + trimmed branch (`ctxvm trim`). `cwd` resolves `latest` and relative paths. */
  trim(body: Partial<z.infer<typeof TrimBody>> & { latest?: boolean; cwd?: string }): Promise<ReturnType<typeof branchJson> & { snapshot: { id: string; name: string; bytes: number } }>;
  /** Page in by a stub's reference: a call id (found in `session`, else searched for in the agents' folders, the project of `cwd` first) or a `ctxvm:` pack reference. */
  pageIn(ref: string, options?: { session?: string; cwd?: string }): Promise<PageInJson>;
  /** The snapshot DAG (`ctxvm tree --json`), snapshot nodes with their tokens when computed. */
  tree(): Promise<{ nodes: (DagNode & { tokens?: number | null })[]; edges: DagEdge[] }>;
  /** `ctxvm session analyze` of a session id, prefix, path or `snapshot:<name-or-id>`, without perMessage. */
  analyze(ref: string, options?: { turns?: number }): Promise<AnalysisJson>;
  /** `ctxvm session economics` of the sessions `list` returns (rows cached per file, size and mtime). */
  economics(options?: { ttl?: '5m' | '1h' }): Promise<EconomicsJson>;
}

/** Options of `createSessionOps`. */
export interface SessionOpsOptions {
  catalog: SessionCatalog;
  /** The object store trims page out to and snapshots live in. */
  objects: ObjectStore;
  roots: SessionRoots;
  /** Directory relative session paths resolve against (default `/`: callers should send absolute paths). */
  cwd?: string;
  /** Clock, Unix ms (default `Date.now`). */
  now?: () => number;
}


/** Creates the session operations; engines load on first use. */
export function createSessionOps(options: SessionOpsOptions): SessionOps {
  const { catalog, objects, roots } = options;
  const now = options.now ?? Date.now;
  const scratchDir = join(roots.home, 'tmp');

  async function discover(agent?: AgentKind): Promise<DiscoveredSession[]> {
    const { discoverSessions } = await import('../session/discovery/discover.js');
    const { sessions } = await discoverSessions({ catalog, claudeConfigDir: roots.claudeConfigDir, codexHome: roots.codexHome, ...(agent ? { agent } : {}) });
    return sessions;
  }

  async function resolve(ref: string | undefined, latest: boolean, cwd: string, agent?: AgentKind): Promise<DiscoveredSession> {
    const { resolveSessionRef } = await import('../session/discovery/resolve.js');
    return resolveSessionRef(ref, latest, { sessions: await discover(agent), cwd, ...(agent ? { agent } : {}) });
  }

  async function snapshotOf(session: DiscoveredSession, name: string, extra: { description?: string; tags?: readonly string[] }) {
    const { createSnapshot } = await import('../session/dag/snapshot.js');
    return createSnapshot({
      catalog,
      store: objects,
      source: { agent: session.agent, sessionId: session.id, path: session.path, project: session.project, ...(session.siblingFiles ? { siblingFiles: session.siblingFiles } : {}) },
      name,
      now,
      ...(extra.description !== undefined ? { description: extra.description } : {}),
      ...(extra.tags ? { tags: extra.tags } : {}),
    });
  }

  async function branchOf(snapshot: string, name: string, extra: { trim?: boolean; at?: string | number; title?: string }) {
    const { branchFromSnapshot } = await import('../session/dag/branch-snapshot.js');
    return branchFromSnapshot({
      catalog,
      store: objects,
      snapshot,
      name,
      claudeConfigDir: roots.claudeConfigDir,
      codexHome: roots.codexHome,
      scratchDir,
      now,
      ...(extra.trim !== undefined ? { trim: extra.trim } : {}),
      ...(extra.at !== undefined ? { at: extra.at } : {}),
      ...(extra.title !== undefined ? { title: extra.title } : {}),
    });
  }

  const analyser = createSessionAnalyser({
    catalog,
    objects,
    scratchDir,
    now,
    resolveFile: async (ref) => (await resolve(ref, false, options.cwd ?? '/')).path,
  });

  const economist = createSessionsEconomist({ scratchDir });

  return {
    async list(filter = {}) {
      const sessions = await discover(filter.agent);
      return filter.project ? sessions.filter((s) => (s.project ?? s.projectDir ?? '').includes(filter.project!)) : sessions;
    },

    async snapshot(body) {
      const session = await resolve(body.session, false, options.cwd ?? '/', body.agent);
      const snap = await snapshotOf(session, body.name, { ...(body.description !== undefined ? { description: body.description } : {}), ...(body.tags ? { tags: body.tags } : {}) });
      return {
        id: snap.id,
        name: snap.name,
        bytes: snap.bytes,
        files: snap.files,
        objects: snap.objects,
        newObjects: snap.newObjects,
        session: { agent: session.agent, id: session.id, path: session.path },
      };
    },

    async branch(body) {
      return branchJson(await branchOf(body.snapshot, body.name, body));
    },

    async trim(body) {
      const session = await resolve(body.session, body.latest === true && body.session === undefined, body.cwd ?? options.cwd ?? '/', body.agent);
      const { generatedSnapshotName } = await import('../session/dag/record-branch.js');
      const name = body.name ?? generatedSnapshotName(session.id, now());
      const snap = await snapshotOf(session, name, { tags: ['trim'] });
      const branch = await branchOf(snap.id, `${name}-trimmed`, body.at !== undefined ? { at: body.at } : {});
      return { ...branchJson(branch), snapshot: { id: snap.id, name: snap.name, bytes: snap.bytes } };
    },

    async tree() {
      const { buildDag } = await import('../session/dag/tree.js');
      const snapshots = await catalog.listSnapshots();
      const graph = buildDag(snapshots, await catalog.listBranches());
      const tokens = new Map(snapshots.map((s) => [s.id, s.stats?.tokens ?? null]));
      return { nodes: graph.nodes.map((n) => (n.kind === 'snapshot' ? { ...n, tokens: tokens.get(n.id) ?? null } : n)), edges: graph.edges };
    },

    analyze(ref, o) {
      return analyser.analyze(ref, o);
    },

    async economics(o = {}) {
      return economist.economics((await discover()).map((s) => s.path), o);
    },

    async pageIn(ref, o = {}) {
      const { pageIn } = await import('../session/trim/page-in.js');
      const { encodeClaudeProjectDir } = await import('../session/discovery/resolve.js');
      const cwd = o.cwd ?? options.cwd;
      const files = o.session ? [(await resolve(o.session, false, cwd ?? '/')).path] : [];
      const projects = join(roots.claudeConfigDir, 'projects');
      const searchRoots = [
        ...(cwd ? [join(projects, encodeClaudeProjectDir(cwd))] : []),
        projects,
        join(roots.codexHome, 'sessions'),
        join(roots.codexHome, 'archived_sessions'),
      ];
      const p = await pageIn(objects, ref, { files, searchRoots });
      return { ref, hash: p.hash, pointer: p.pointer, kind: p.kind, content: p.content, text: p.text, ...(p.file ? { file: p.file } : {}), verified: p.verified };
    },
  };
}
