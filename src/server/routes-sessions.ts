/** Session routes: `/v1/sessions…`. Sessions are machine-wide, so only admin keys reach them. */
import { z } from 'zod';
import type { SessionOps } from './session-ops.js';
import { defineRoute, type RouteDef } from './route.js';
import { AnalysisQuery, AnalysisResponse, BranchBody, EconomicsQuery, EconomicsResponse, BranchResponse, PageInResponse,
  PageInQuery, RefParams, SessionsQuery, SessionView, SnapshotBody, SnapshotResponse, TreeResponse, TrimBody } from './schemas.js';

/** The session routes. */
export function sessionRoutes(ops: SessionOps): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/sessions',
      operationId: 'listSessions',
      summary: 'Claude Code and Codex sessions on this machine, newest first (incremental index).',
      tag: 'sessions',
      access: 'admin',
      query: SessionsQuery,
      response: { description: 'the sessions', schema: z.object({ sessions: z.array(SessionView) }) },
      async handler({ query }) {
        return { json: { sessions: await ops.list(query) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/sessions/tree',
      operationId: 'sessionTree',
      summary: 'The snapshot DAG (`ctxvm tree --json`): snapshots, the branches made from them, later snapshots; snapshot tokens when computed.',
      tag: 'sessions',
      access: 'admin',
      response: { description: 'nodes (oldest first) and edges', schema: TreeResponse },
      async handler() {
        return { json: await ops.tree() };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/sessions/analysis',
      operationId: 'analyzeSession',
      summary: 'Token composition before and after trim, and prompt-caching economics (`ctxvm session analyze --json` without perMessage); cached per file, size and mtime.',
      tag: 'sessions',
      access: 'admin',
      query: AnalysisQuery,
      response: { description: 'the analysis', schema: AnalysisResponse },
      async handler({ query, stage }) {
        const t0 = performance.now();
        const json = await ops.analyze(query.session, query.turns !== undefined ? { turns: query.turns } : {});
        stage('analyze', performance.now() - t0);
        return { json };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/sessions/economics',
      operationId: 'sessionsEconomics',
      summary: "The CMV paper's economics table for the sessions listed (`ctxvm session economics --json`): reduction by ctxvm's trim, class, break-even call; rows cached per file, size and mtime.",
      tag: 'sessions',
      access: 'admin',
      query: EconomicsQuery,
      response: { description: 'one row per session and the table per class and overall', schema: EconomicsResponse },
      async handler({ query, stage }) {
        const t0 = performance.now();
        const json = await ops.economics(query.ttl ? { ttl: query.ttl } : {});
        stage('economics', performance.now() - t0);
        return { json };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/sessions/snapshot',
      operationId: 'snapshotSession',
      summary: 'Capture a session as a named, immutable snapshot.',
      tag: 'sessions',
      access: 'admin',
      body: SnapshotBody,
      response: { description: 'the snapshot', schema: SnapshotResponse, status: 201 },
      async handler({ body, stage }) {
        const t0 = performance.now();
        const json = await ops.snapshot(body);
        stage('snapshot', performance.now() - t0);
        return { json };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/sessions/branch',
      operationId: 'branchSession',
      summary: 'Start a new session from a snapshot: new ids, trimmed unless trim is false, optionally cut.',
      tag: 'sessions',
      access: 'admin',
      body: BranchBody,
      response: { description: 'the branch and the command that resumes it', schema: BranchResponse, status: 201 },
      async handler({ body, stage }) {
        const t0 = performance.now();
        const json = await ops.branch(body);
        stage('branch', performance.now() - t0);
        return { json };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/sessions/trim',
      operationId: 'trimSession',
      summary: 'Snapshot a session and branch it trimmed (the original is untouched); returns the resume command.',
      tag: 'sessions',
      access: 'admin',
      body: TrimBody,
      response: { description: 'the trimmed branch and its snapshot', schema: BranchResponse.extend({ snapshot: z.object({ id: z.string(), name: z.string(), bytes: z.number() }) }), status: 201 },
      async handler({ body, stage }) {
        const t0 = performance.now();
        const json = await ops.trim(body);
        stage('trim', performance.now() - t0);
        return { json };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/sessions/page-in/{ref}',
      operationId: 'pageIn',
      summary: 'One paged-out payload by its stub\'s reference: the call id beside it, <id>/<field>, or a ctxvm: reference (URL-encoded).',
      tag: 'sessions',
      access: 'admin',
      params: RefParams,
      query: PageInQuery,
      response: { description: 'the payload, exactly as the tool returned it', schema: PageInResponse },
      async handler({ params, query }) {
        const { text: _text, ...json } = await ops.pageIn(params.ref, query.session ? { session: query.session } : {});
        return { json };
      },
    }),
  ];
}
