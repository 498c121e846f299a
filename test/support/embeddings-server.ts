/**
 * A real HTTP server on 127.0.0.1 speaking the OpenAI embeddings wire format, with a
 * deterministic bilingual embedder: each concept of a small lexicon is one dimension, and an
 * English or Chinese word of that concept adds to it, so "dentist" and "牙医" point the same
 * way. Modes make it fail (HTTP 500) or stall (no answer), as real endpoints do.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Concept → words (English lower-case, Chinese as written). */
export const BILINGUAL_LEXICON: Readonly<Record<string, readonly string[]>> = {
  dentist: ['dentist', 'dental', '牙医', '牙科', '看牙'],
  dog: ['dog', 'dogs', 'puppy', '狗', '小狗'],
  birthday: ['birthday', '生日'],
  flower: ['flower', 'flowers', 'bouquet', '花', '花束'],
  swim: ['swim', 'swimming', 'pool', '游泳', '泳池'],
  budget: ['budget', 'expenses', '预算', '开支'],
  report: ['report', 'weekly', '周报', '报告'],
  sister: ['sister', '姐姐', '妹妹'],
};

/** The deterministic embedding of `text`: one dimension per concept, plus a constant one. */
export function lexiconEmbedding(text: string): number[] {
  const lower = text.toLowerCase();
  const words = new Set(lower.match(/[a-z]+/g) ?? []);
  const v = Object.values(BILINGUAL_LEXICON).map((forms) => forms.filter((f) => (/^[a-z]+$/.test(f) ? words.has(f) : lower.includes(f))).length);
  // A small constant dimension: no vector is zero, and texts with no concept are all alike.
  v.push(0.1);
  return v;
}

export type EmbeddingsServerMode = 'ok' | 'fail' | 'stall';

export interface EmbeddingsServer {
  /** Base URL to configure (".../v1"). */
  baseURL: string;
  /** What the server does with the next requests. */
  mode: EmbeddingsServerMode;
  /** Requests received: model, inputs and the authorization header. */
  readonly requests: Array<{ model: string; input: string[]; authorization: string | undefined }>;
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts the server on a free loopback port. */
export async function startEmbeddingsServer(): Promise<EmbeddingsServer> {
  const stalled: Array<() => void> = [];
  const state: EmbeddingsServer = {
    baseURL: '',
    mode: 'ok',
    requests: [],
    close: async () => {
      for (const end of stalled.splice(0)) end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer(async (req, res) => {
    const raw = await bodyOf(req);
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(raw) as { model: string; input: string | string[] };
    const input = Array.isArray(body.input) ? body.input : [body.input];
    state.requests.push({ model: body.model, input, authorization: req.headers.authorization });
    if (state.mode === 'fail') {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'model overloaded' } }));
      return;
    }
    if (state.mode === 'stall') {
      stalled.push(() => res.destroy());
      return;
    }
    const data = input.map((text, index) => ({ object: 'embedding', index, embedding: lexiconEmbedding(text) }));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 0, total_tokens: 0 } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return state;
}
