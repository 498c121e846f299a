/**
 * A route is data — method, path template, who may call it, and the zod schemas of its
 * parameters, query, body and response — plus a handler that receives the parsed input. The
 * app factory mounts the list and the OpenAPI document is generated from the same list, so the
 * two cannot disagree.
 */
import type { z } from 'zod';
import { UsageError } from '../errors.js';
import type { ApiPrincipal } from './api-keys.js';

/** Who may call a route: anyone, any valid key, a key of the path's `{user}` (or admin), or an admin key. */
export type Access = 'public' | 'any' | 'user' | 'admin';

/** What a handler receives. */
export interface HandlerInput<P, Q, B, H = unknown> {
  params: P;
  query: Q;
  body: B;
  /** The request headers the route declares (names in lower case), parsed. */
  headers: H;
  /** The verified key (undefined on public routes). */
  principal: ApiPrincipal | undefined;
  /** Adds a stage timing (ms) to the request's log line. */
  stage(name: string, ms: number): void;
  /** Adds fields to the request's log line (content only when the server logs content). */
  note(fields: { user?: string; intent?: string; content?: Record<string, unknown> }): void;
}

/** What a handler returns: a JSON body (status 200 unless given), or text with a content type. */
export type HandlerReply =
  | { json: unknown; status?: number }
  | { text: string; contentType: string; status?: number }
  /** A response made by the handler itself (server-sent events). */
  | { response: Response };

/** A route of the API. */
export interface RouteDef<P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType, H extends z.ZodType = z.ZodType> {
  method: 'get' | 'post' | 'patch';
  /** OpenAPI path template, e.g. `/v1/users/{user}/tasks/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  tag: 'memory' | 'sessions' | 'system';
  access: Access;
  params?: P;
  query?: Q;
  body?: B;
  /** Request headers the route reads: an object schema keyed by lower-case header name (other headers are ignored). */
  headers?: H;
  response: { description: string; schema?: z.ZodType; contentType?: string; /** Success status (default 200). */ status?: number };
  /** Error statuses only this route answers with, and when (documented in the OpenAPI document). */
  errors?: Record<string, string>;
  handler(input: HandlerInput<z.infer<P>, z.infer<Q>, z.infer<B>, z.infer<H>>): Promise<HandlerReply>;
}

/** Identity helper that infers the handler's input types from the schemas. */
export function defineRoute<P extends z.ZodType = z.ZodUndefined, Q extends z.ZodType = z.ZodUndefined, B extends z.ZodType = z.ZodUndefined, H extends z.ZodType = z.ZodUndefined>(
  def: RouteDef<P, Q, B, H>,
): RouteDef {
  return def as unknown as RouteDef;
}

/** The Hono path of a template: `{name}` → `:name`; a `{ref}` may span slashes. */
export function honoPath(template: string): string {
  return template.replace(/\{(\w+)\}/g, (_m, name: string) => (name === 'ref' ? `:${name}{.+}` : `:${name}`));
}

/** Parses `value` with `schema`; a failure is a UsageError naming the field (`body.text: …`). */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown, where: 'body' | 'query' | 'path' | 'header'): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const detail = result.error.issues
    .slice(0, 3)
    .map((issue) => `${[where, ...issue.path.map(String)].join('.')}: ${issue.message}`)
    .join('; ');
  throw new UsageError(detail, { hint: 'see GET /openapi.json for the request shapes' });
}
