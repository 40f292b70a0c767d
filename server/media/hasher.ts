import { Worker } from 'node:worker_threads';

export interface Hashes {
  md5: string;
  sha256: string;
}

/**
 * The worker's whole program (CommonJS, run with `eval`, so the server build needs no second
 * entry file). One md5 and one sha256 per upload in progress, keyed by id; each block of bytes
 * is acknowledged once hashed, so the sender knows how much is still queued.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const jobs = new Map();
const job = (id) => {
  let found = jobs.get(id);
  if (!found) jobs.set(id, (found = { md5: createHash('md5'), sha256: createHash('sha256') }));
  return found;
};
parentPort.on('message', (message) => {
  if (message.type === 'data') {
    const hashes = job(message.id);
    hashes.md5.update(message.bytes);
    hashes.sha256.update(message.bytes);
    parentPort.postMessage({ type: 'hashed', id: message.id, bytes: message.bytes.byteLength });
  } else if (message.type === 'end') {
    const hashes = job(message.id);
    jobs.delete(message.id);
    parentPort.postMessage({ type: 'digest', id: message.id, md5: hashes.md5.digest('hex'), sha256: hashes.sha256.digest('hex') });
  } else if (message.type === 'abort') {
    jobs.delete(message.id);
  }
});
`;

type FromWorker =
  { type: 'hashed'; id: number; bytes: number } | ({ type: 'digest'; id: number } & Hashes);

/** Bytes sent to the worker at a time: few messages, and little left to hash at the end. */
const SEND_BYTES = 256 * 1024;
/**
 * Bytes of one upload sent but not yet hashed before its receiver waits: memory stays bounded
 * when bytes arrive faster than they are hashed (fast links, many uploads at once).
 */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024;

let shared: HashWorker | null = null;

/**
 * Stops the hashing worker (a new one starts with the next upload). Uploads being hashed fail.
 * Nothing needs it to exit, since an idle worker never keeps the process alive.
 */
export async function stopHashWorker(): Promise<void> {
  await shared?.terminate();
}

/**
 * md5 and sha256 of an upload, computed in a worker thread while the main thread goes on
 * receiving, parsing and writing (hashing was half of an upload's time on the main thread). The
 * digests are needed only when the blob is adopted, after the file has been inspected, so what
 * is left to hash when the last byte arrives overlaps the inspection too.
 */
export class StreamHash {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private queuedBytes = 0;
  private drained: { resolve: () => void; reject: (error: Error) => void } | null = null;
  private ended = false;

  private constructor(
    private readonly worker: HashWorker,
    private readonly id: number,
  ) {}

  static start(): StreamHash {
    shared ??= new HashWorker((gone) => {
      if (shared === gone) shared = null; // the next upload starts a new worker
    });
    const worker = shared;
    return worker.begin((id) => new StreamHash(worker, id));
  }

  /**
   * Adds bytes. Returns a promise when too much is already waiting to be hashed: wait for it
   * before passing more (it rejects if the worker is gone).
   */
  update(chunk: Uint8Array): Promise<void> | undefined {
    this.pending.push(chunk);
    this.pendingBytes += chunk.byteLength;
    if (this.pendingBytes >= SEND_BYTES) this.send();
    if (this.queuedBytes <= MAX_QUEUED_BYTES) return undefined;
    return new Promise((resolve, reject) => (this.drained = { resolve, reject }));
  }

  /** The digests of everything passed to `update`. */
  digest(): Promise<Hashes> {
    if (this.ended) return Promise.reject(new Error('This upload was already ended'));
    this.send();
    this.ended = true;
    return this.worker.end(this.id);
  }

  /** Forgets this upload (it failed); a no-op once ended. */
  abort(): void {
    if (this.ended) return;
    this.ended = true;
    this.worker.cancel(this.id);
  }

  /** From the worker: `bytes` more are hashed. */
  hashed(bytes: number): void {
    this.queuedBytes -= bytes;
    if (this.drained && this.queuedBytes <= MAX_QUEUED_BYTES / 2) {
      this.drained.resolve();
      this.drained = null;
    }
  }

  /** From the worker: it is gone; a receiver waiting to send more must stop. */
  failed(error: Error): void {
    this.drained?.reject(error);
    this.drained = null;
  }

  private send(): void {
    if (this.pendingBytes === 0) return;
    // One fresh buffer of exactly these bytes, handed over without a copy. (A chunk is often a
    // view into a larger buffer, all of which would be copied.)
    const bytes = Buffer.concat(this.pending, this.pendingBytes);
    const transferable = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    this.worker.post(
      { type: 'data', id: this.id, bytes },
      transferable ? [bytes.buffer as ArrayBuffer] : [],
    );
    this.queuedBytes += this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
  }
}

class HashWorker {
  private readonly worker: Worker;
  /** Uploads begun and not yet ended, by id; the worker keeps the process alive while any is. */
  private readonly streams = new Map<number, StreamHash>();
  private readonly waiting = new Map<
    number,
    { resolve: (hashes: Hashes) => void; reject: (error: Error) => void }
  >();
  private ids = 0;
  /** Set once the worker has failed or exited: an upload still streaming to it must fail too. */
  private gone: Error | null = null;

  constructor(onGone: (worker: HashWorker) => void) {
    // No inherited flags: the parent's loaders (tsx in development) and heap settings are not
    // needed to hash, and --input-type=module would make the CommonJS source fail.
    this.worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] });
    this.worker.on('message', (message: FromWorker) => {
      if (message.type === 'hashed') return this.streams.get(message.id)?.hashed(message.bytes);
      const waiter = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      waiter?.resolve({ md5: message.md5, sha256: message.sha256 });
    });
    const fail = (error: Error) => {
      this.gone ??= error;
      onGone(this);
      for (const stream of this.streams.values()) stream.failed(error);
      for (const waiter of this.waiting.values()) waiter.reject(error);
      this.waiting.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`The hashing worker exited (${code})`)));
    // Alive only while an upload is being hashed (see begin). After the listeners: adding one
    // refs the port again.
    this.worker.unref();
  }

  begin(make: (id: number) => StreamHash): StreamHash {
    const id = ++this.ids;
    const stream = make(id);
    if (this.streams.size === 0) this.worker.ref();
    this.streams.set(id, stream);
    return stream;
  }

  async terminate(): Promise<void> {
    await this.worker.terminate();
  }

  post(message: unknown, transfer: ArrayBuffer[] = []): void {
    if (!this.gone) this.worker.postMessage(message, transfer);
  }

  end(id: number): Promise<Hashes> {
    const hashes = new Promise<Hashes>((resolve, reject) => {
      if (this.gone) return reject(this.gone);
      this.waiting.set(id, { resolve, reject });
      this.post({ type: 'end', id });
    });
    return hashes.finally(() => this.forget(id));
  }

  cancel(id: number): void {
    try {
      this.post({ type: 'abort', id });
    } finally {
      this.forget(id);
    }
  }

  private forget(id: number): void {
    if (this.streams.delete(id) && this.streams.size === 0) this.worker.unref();
  }
}
