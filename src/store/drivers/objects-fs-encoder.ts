/**
 * Hashing and compressing puts off the calling thread (`PutOptions.offThread`): one worker thread
 * per store, started on first use and stopped once idle, hashes a copy of the bytes and
 * compresses it with the put's codec settings, each in one native call. Writing stays with the
 * store, on the calling thread, so atomicity and deduplication are those of any put.
 *
 * Why a worker and not the libuv pool: zlib's asynchronous API runs a whole buffer as many
 * chunk-sized round trips, each with a callback on the calling thread, and WebCrypto's digest
 * copies its input there first; on the trimmer's hot path that was a third of the work it was
 * meant to move. Here the calling thread pays nothing for bytes in shared memory (the trimmer's
 * packs are) and one copy for others. The worker's code is a plain-JavaScript string so that it runs the same from the built
 * package and from the TypeScript sources under test; its options mirror object-codec.ts.
 */
import { Worker } from 'node:worker_threads';
import { CtxvmError } from '../../errors.js';
import type { CodecSettings } from '../object-codec.js';

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const zlib = require('node:zlib');
// one size for every output buffer: each payload is freed as soon as it is written (releasePayload),
// so this thread's allocator hands the next one the block the last one left; buffers sized after
// the input (half of it) left its arena fragmented instead (measured: 4-8 MB more at 100 MiB)
const OUTPUT_CHUNK = 1024 * 1024;
parentPort.on('message', (job) => {
  try {
    const data = Buffer.from(job.data.buffer, job.data.byteOffset, job.data.byteLength);
    const hash = createHash('sha256').update(data).digest('hex');
    let payload;
    if (job.codec === 'brotli') {
      payload = zlib.brotliCompressSync(data, {
        params: { [zlib.constants.BROTLI_PARAM_QUALITY]: job.level, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length },
        chunkSize: OUTPUT_CHUNK,
      });
    } else if (job.codec === 'gzip') payload = zlib.gzipSync(data, { level: job.level, chunkSize: OUTPUT_CHUNK });
    // the output is handed over in the buffer zlib wrote it into, spare room and all. A copy of
    // the exact size left that buffer (OUTPUT_CHUNK) behind as garbage: this thread allocates
    // so little that it seldom collects, and held 20-30 MB of them in a 100 MiB trim (measured).
    parentPort.postMessage({ id: job.id, hash, payload }, payload ? [payload.buffer] : []);
  } catch (error) {
    parentPort.postMessage({ id: job.id, error: String((error && error.message) || error) });
  }
});
`;

/** How long an idle worker is kept before it is stopped, ms. */
const IDLE_MS = 2000;

/** How long a worker started ahead of use waits for its first job, ms (a trim's first pass). */
const WARM_MS = 30_000;

/**
 * Frees a payload `encode` gave back, now rather than whenever a collection finds it. Its memory
 * is the encoder thread's allocator's, moved here; once it has lived through a young-generation
 * collection (a put's write takes that long) only a full one frees it, and those are rare while a
 * trim runs: the thread's allocator held 25-27 MB of such payloads in a 100 MiB trim (measured).
 * Moving the memory to a clone nothing refers to lets the next young collection free it. The
 * caller must hold no other view of the payload.
 */
export function releasePayload(payload: Buffer): void {
  const memory = payload.buffer;
  // a shared buffer cannot be moved (and `encode` never gives one back)
  if (memory instanceof ArrayBuffer) structuredClone(memory, { transfer: [memory] });
}

/** What the worker made of one buffer. */
export interface Encoded {
  /** Lowercase hex SHA-256 of the bytes. */
  hash: string;
  /** The bytes compressed with the settings asked for (absent for codec 'none'). */
  payload?: Buffer;
}

interface Pending {
  resolve: (e: Encoded) => void;
  reject: (error: unknown) => void;
}

/** One store's off-thread encoder (no state is shared between stores). */
export class OffThreadEncoder {
  #worker: Worker | undefined;
  readonly #pending = new Map<number, Pending>();
  #next = 1;
  #idle: NodeJS.Timeout | undefined;

  /** Hashes and compresses a copy of `bytes` in the worker. */
  encode(bytes: Uint8Array, settings: CodecSettings): Promise<Encoded> {
    const worker = this.#start();
    const id = this.#next++;
    // the worker reads shared memory where it is; other bytes are copied into some once (a
    // message would copy the whole allocation a view lies in)
    let data: Uint8Array = bytes;
    if (!(bytes.buffer instanceof SharedArrayBuffer)) {
      data = new Uint8Array(new SharedArrayBuffer(bytes.byteLength));
      data.set(bytes);
    }
    return new Promise<Encoded>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ id, data, codec: settings.codec, level: settings.level });
    });
  }

  /** Starts the worker ahead of the first `encode` (its start would hold that job up). */
  warm(): void {
    if (this.#pending.size > 0) return;
    this.#start();
    this.#rest(WARM_MS);
  }

  #start(): Worker {
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = undefined;
    if (this.#worker) {
      // a job in flight keeps the process alive until its answer comes
      this.#worker.ref();
      return this.#worker;
    }
    // no flags of the host (with --input-type=module the source would be read as a module)
    const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] });
    worker.on('message', (m: { id: number; hash?: string; payload?: Uint8Array; error?: string }) => {
      const job = this.#pending.get(m.id);
      if (!job) return;
      this.#pending.delete(m.id);
      if (m.error !== undefined || m.hash === undefined) job.reject(new CtxvmError('E_IO', `could not hash and compress an object off the calling thread: ${m.error ?? 'no answer'}`));
      else job.resolve({ hash: m.hash, ...(m.payload ? { payload: Buffer.from(m.payload.buffer, m.payload.byteOffset, m.payload.byteLength) } : {}) });
      if (this.#pending.size === 0) this.#rest();
    });
    worker.on('error', (error) => this.#fail(worker, error));
    worker.on('exit', (code) => this.#fail(worker, new CtxvmError('E_IO', `the object encoder thread stopped (exit code ${code})`)));
    this.#worker = worker;
    return worker;
  }

  /** Lets the process exit while nothing is asked, and stops the worker if that lasts. */
  #rest(idleMs = IDLE_MS): void {
    const worker = this.#worker;
    if (!worker) return;
    worker.unref();
    this.#idle = setTimeout(() => {
      if (this.#worker === worker && this.#pending.size === 0) {
        this.#worker = undefined;
        void worker.terminate();
      }
    }, idleMs);
    this.#idle.unref();
  }

  #fail(worker: Worker, error: unknown): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    for (const job of this.#pending.values()) job.reject(error);
    this.#pending.clear();
  }
}
