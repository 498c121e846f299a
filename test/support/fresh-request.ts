/**
 * One HTTP request on a fresh connection (no keep-alive), so a `serve --workers` cluster picks
 * the worker anew for each: the tests of cross-worker behaviour need requests spread over workers.
 */
import { request } from 'node:http';

export interface FreshResponse {
  status: number;
  json: any;
}

export function freshRequest(url: string, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<FreshResponse> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${url}${path}`,
      { method, agent: false, headers: { authorization: `Bearer ${key}`, connection: 'close', ...(data ? { 'content-type': 'application/json' } : {}), ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}
