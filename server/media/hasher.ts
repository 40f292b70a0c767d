import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';

export interface Hashes {
  md5: string;
  sha256: string;
}

type Algorithm = keyof Hashes;

/**
 * One worker's whole program (CommonJS, run with `eval`, so the server build needs no second
 * entry file): a hash per algorithm of `algorithms` for each upload in progress, keyed by id.
 * Workers form a chain: the first gets the bytes from the server and passes each block on to
 * the `next`, and the last hands it back to the server once hashed, so blocks are never copied.
 * A block handed back is through every stage: that is how the server knows what is still queued
 * (the stages before have no need to report; each is at least as far along as the last).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { algorithms, next, previous } = workerData;
const jobs = new Map();
(previous ?? parentPort).on('message', (message) => {
  const { type, id } = message;
  if (type === 'data') {
    let hashes = jobs.get(id);
    if (!hashes) jobs.set(id, (hashes = algorithms.map((algorithm) => createHash(algorithm))));
    for (const hash of hashes) hash.update(message.bytes);
    const transfer = [message.bytes.buffer];
    if (next) next.postMessage(message, transfer);
    else parentPort.postMessage({ type: 'hashed', id, block: message.bytes }, transfer);
  } else if (type === 'end') {
    const hashes = jobs.get(id) ?? algorithms.map((algorithm) => createHash(algorithm));
    jobs.delete(id);
    const hex = {};
    algorithms.forEach((algorithm, index) => (hex[algorithm] = hashes[index].digest('hex')));
    parentPort.postMessage({ type: 'digest', id, hex });
    next?.postMessage(message);
  } else if (type === 'abort') {
    jobs.delete(id);
    next?.postMessage(message);
  }
});
`;

type FromWorker =
  | { type: 'hashed'; id: number; block: Uint8Array }
  | { type: 'digest'; id: number; hex: Partial<Hashes> };

/** The chain of workers, and the algorithms each computes. */
const STAGES: Algorithm[][] = [['md5'], ['sha256']];

/**
 * Bytes are copied into blocks of this size, handed over to the workers without another copy:
 * few messages, and little left to hash at the end.
 */
const BLOCK_BYTES = 256 * 1024;
/**
 * Bytes of one upload sent but not yet hashed before its receiver waits: memory stays bounded
 * when bytes arrive faster than they are hashed (fast links, many uploads at once).
 */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024;
/**
 * Blocks the workers handed back, for the next ones to reuse: a fresh block costs more than the
 * copy into it (the kernel hands out and zeroes new pages), and uploads come one after another.
 */
const spareBlocks: ArrayBuffer[] = [];
const MAX_SPARE_BLOCKS = 2 * (MAX_QUEUED_BYTES / BLOCK_BYTES);

function newBlock(): Uint8Array {
  return new Uint8Array(spareBlocks.pop() ?? new ArrayBuffer(BLOCK_BYTES));
}

/**
 * md5 and sha256 each have their own worker, so they run side by side: an upload waits for the
 * slower one (md5) instead of both in turn.
 */
let shared: HashWorkers | null = null;

/**
 * Stops the hashing workers (new ones start with the next upload). Uploads being hashed fail.
 * Nothing needs it to exit, since idle workers never keep the process alive.
 */
export async function stopHashWorker(): Promise<void> {
  await shared?.terminate();
}

/**
 * md5 and sha256 of an upload, computed in worker threads while the main thread goes on
 * receiving, parsing and writing (hashing was half of an upload's time on the main thread). The
 * digests are needed only when the blob is adopted, after the file has been inspected, so what
 * is left to hash when the last byte arrives overlaps the inspection too.
 */
export class StreamHash {
  /** The block being filled, and how much of it is. */
  private block: Uint8Array | null = null;
  private filled = 0;
  /** Sent but not yet through every stage. */
  private queued = 0;
  private drained: { resolve: () => void; reject: (error: Error) => void } | null = null;
  private ended = false;

  private constructor(
    private readonly workers: HashWorkers,
    private readonly id: number,
  ) {}

  static start(): StreamHash {
    shared ??= new HashWorkers((gone) => {
      if (shared === gone) shared = null; // the next upload starts new workers
    });
    return shared.begin((workers, id) => new StreamHash(workers, id));
  }

  /**
   * Adds bytes. Returns a promise when too much is already waiting to be hashed: wait for it
   * before passing more (it rejects if a worker is gone).
   */
  update(chunk: Uint8Array): Promise<void> | undefined {
    const gone = this.workers.failure;
    if (gone) return Promise.reject(gone); // nothing sent now would ever be hashed
    for (let offset = 0; offset < chunk.byteLength;) {
      this.block ??= newBlock();
      const length = Math.min(chunk.byteLength - offset, BLOCK_BYTES - this.filled);
      this.block.set(chunk.subarray(offset, offset + length), this.filled);
      this.filled += length;
      offset += length;
      if (this.filled === BLOCK_BYTES) this.send();
    }
    if (this.queued <= MAX_QUEUED_BYTES) return undefined;
    return new Promise((resolve, reject) => (this.drained = { resolve, reject }));
  }

  /** The digests of everything passed to `update`. */
  digest(): Promise<Hashes> {
    if (this.ended) return Promise.reject(new Error('This upload was already ended'));
    this.send();
    this.ended = true;
    return this.workers.end(this.id);
  }

  /** Forgets this upload (it failed); a no-op once ended. */
  abort(): void {
    if (this.ended) return;
    this.ended = true;
    this.workers.cancel(this.id);
    this.failed(new Error('This upload was aborted'));
  }

  /** From the last worker: `block` went through every stage and is handed back. */
  hashed(block: Uint8Array): void {
    this.queued -= block.byteLength;
    if (spareBlocks.length < MAX_SPARE_BLOCKS) spareBlocks.push(block.buffer as ArrayBuffer);
    if (this.drained && this.queued <= MAX_QUEUED_BYTES / 2) {
      this.drained.resolve();
      this.drained = null;
    }
  }

  /** From the workers (they are gone) or from `abort`: a receiver waiting to send more must stop. */
  failed(error: Error): void {
    this.drained?.reject(error);
    this.drained = null;
  }

  private send(): void {
    if (!this.block || this.filled === 0) return;
    const bytes = this.block.subarray(0, this.filled);
    this.workers.post({ type: 'data', id: this.id, bytes }, [bytes.buffer as ArrayBuffer]);
    this.queued += this.filled;
    this.block = null;
    this.filled = 0;
  }
}

/**
 * The hashing workers (see STAGES) with the uploads in progress. Every upload is hashed by all
 * of them, so they live and fail together: when one fails, the others are stopped as well.
 */
class HashWorkers {
  private readonly workers: Worker[];
  /** Uploads begun and not yet ended, by id; the workers keep the process alive while any is. */
  private readonly streams = new Map<number, StreamHash>();
  private readonly waiting = new Map<
    number,
    {
      hex: Partial<Hashes>;
      resolve: (hashes: Hashes) => void;
      reject: (error: Error) => void;
    }
  >();
  private ids = 0;
  /** Set once a worker has failed or exited: an upload still streaming must fail too. */
  private gone: Error | null = null;

  constructor(private readonly onGone: (workers: HashWorkers) => void) {
    const links = STAGES.slice(1).map(() => new MessageChannel());
    this.workers = STAGES.map((algorithms, index) =>
      this.spawn(algorithms, links[index]?.port1, links[index - 1]?.port2),
    );
  }

  /** Why the workers are gone, once they are. */
  get failure(): Error | null {
    return this.gone;
  }

  begin(make: (workers: HashWorkers, id: number) => StreamHash): StreamHash {
    const id = ++this.ids;
    const stream = make(this, id);
    if (this.streams.size === 0) for (const worker of this.workers) worker.ref();
    this.streams.set(id, stream);
    return stream;
  }

  async terminate(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }

  /** To the first worker, which passes everything on down the chain. */
  post(message: unknown, transfer: ArrayBuffer[] = []): void {
    if (!this.gone) this.workers[0]!.postMessage(message, transfer);
  }

  end(id: number): Promise<Hashes> {
    const hashes = new Promise<Hashes>((resolve, reject) => {
      if (this.gone) return reject(this.gone);
      this.waiting.set(id, { hex: {}, resolve, reject });
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

  private spawn(algorithms: Algorithm[], next?: MessagePort, previous?: MessagePort): Worker {
    const ports = [next, previous].filter((port) => port !== undefined);
    // No inherited flags: the parent's loaders (tsx in development) and heap settings are not
    // needed to hash, and --input-type=module would make the CommonJS source fail.
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      execArgv: [],
      workerData: { algorithms, next, previous },
      transferList: ports,
    });
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'hashed') {
        return this.streams.get(message.id)?.hashed(message.block);
      }
      const waiter = this.waiting.get(message.id);
      if (!waiter) return;
      Object.assign(waiter.hex, message.hex);
      const { md5, sha256 } = waiter.hex;
      if (md5 === undefined || sha256 === undefined) return;
      this.waiting.delete(message.id);
      waiter.resolve({ md5, sha256 });
    });
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => this.fail(new Error(`The hashing worker exited (${code})`)));
    // Alive only while an upload is being hashed (see begin). After the listeners: adding one
    // refs the port again.
    worker.unref();
    return worker;
  }

  private fail(error: Error): void {
    if (this.gone) return;
    this.gone = error;
    this.onGone(this);
    void this.terminate(); // the others: every upload needs all of them
    for (const stream of this.streams.values()) stream.failed(error);
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }

  private forget(id: number): void {
    if (this.streams.delete(id) && this.streams.size === 0) {
      for (const worker of this.workers) worker.unref();
    }
  }
}
