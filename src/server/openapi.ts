/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the route list (routes.ts files) and
 * their zod schemas: every mounted route appears, with its parameters, body, response and the
 * error shape. JSON Schema 2020-12 is OpenAPI 3.1's schema dialect, which zod emits directly.
 */
import { z } from 'zod';
import type { RouteDef } from './route.js';
import { ErrorResponse } from './schemas.js';

type JsonObject = Record<string, unknown>;

function jsonSchema(schema: z.ZodType): JsonObject {
  const out = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonObject;
  delete out.$schema;
  return out;
}

function outputSchema(schema: z.ZodType): JsonObject {
  const out = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonObject;
  delete out.$schema;
  return out;
}

/** `idempotency-key` → `Idempotency-Key`. */
function headerName(lower: string): string {
  return lower.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}

/** Path, query or header parameters from an object schema, one entry per property. */
function parameters(schema: z.ZodType | undefined, where: 'path' | 'query' | 'header'): JsonObject[] {
  if (!schema) return [];
  const s = jsonSchema(schema) as { properties?: Record<string, JsonObject>; required?: string[] };
  return Object.entries(s.properties ?? {}).map(([name, prop]) => {
    const { description, ...rest } = prop;
    return {
      name: where === 'header' ? headerName(name) : name,
      in: where,
      required: where === 'path' || (s.required ?? []).includes(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

const ERROR_STATUSES: Record<string, string> = {
  '400': 'bad input: the message names the field (code E_USAGE)',
  '401': 'missing or invalid API key (E_UNAUTHORIZED)',
  '403': 'the key may not touch this user, or the route needs an admin key (E_FORBIDDEN)',
  '404': 'no such record or route (E_NOT_FOUND, E_ROUTE)',
  '413': 'request body over the size limit (E_TOO_LARGE)',
  '415': 'a body sent with a Content-Type other than application/json (E_MEDIA_TYPE)',
  '500': 'the operation failed (E_IO, E_INTEGRITY, E_INTERNAL)',
};

/** Every response carries the request's id (http.ts, `requestIdOf`). */
const REQUEST_ID_HEADER = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };

/** Options of `buildOpenApiDocument`. */
export interface OpenApiOptions {
  version: string;
  /** Request body limit, bytes (mentioned in the description). */
  maxBodyBytes: number;
}

/** Builds the document for `routes`. */
export function buildOpenApiDocument(routes: readonly RouteDef[], options: OpenApiOptions): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const r of routes) {
    const errors = Object.fromEntries(
      Object.entries(ERROR_STATUSES)
        .filter(([status]) => (r.access !== 'public' || !['401', '403'].includes(status)) && (r.access !== 'any' || status !== '403') && (r.body || (status !== '413' && status !== '415')))
        .concat(Object.entries(r.errors ?? {}))
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([status, description]) => [status, { description, headers: REQUEST_ID_HEADER, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }]),
    );
    const success = String(r.response.status ?? 200);
    const contentType = r.response.contentType ?? 'application/json';
    (paths[r.path] ??= {})[r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      tags: [r.tag],
      security: r.access === 'public' ? [] : [{ bearerAuth: [] }],
      ...(r.access === 'admin' ? { 'x-ctxvm-access': 'admin' } : r.access === 'user' ? { 'x-ctxvm-access': 'user (own user) or admin' } : {}),
      parameters: [...parameters(r.params, 'path'), ...parameters(r.query, 'query'), ...parameters(r.headers, 'header')],
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(r.body) } } } } : {}),
      responses: {
        [success]: { description: r.response.description, headers: REQUEST_ID_HEADER, content: { [contentType]: { schema: r.response.schema ? outputSchema(r.response.schema) : { type: 'string' } } } },
        ...errors,
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'ctxvm',
      version: options.version,
      description: `Virtual memory for LLM agent context: per-user memory (processMessage, rebuilt contexts, tasks) and machine-wide agent sessions (admin). Authenticate with \`Authorization: Bearer <key>\` (\`ctxvm keys create\`). Request bodies are limited to ${options.maxBodyBytes} bytes.`,
    },
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'an API key from `ctxvm keys create --user U` or `--admin`' } },
      schemas: { Error: outputSchema(ErrorResponse) },
      headers: {
        RequestId: {
          description: "the request's id, also on its log line (requestId): the client's own X-Request-Id when it is a plain token (letters, digits, ._:-, at most 128 characters), else a new UUID",
          schema: { type: 'string' },
        },
      },
    },
    paths,
  };
}
