import { createReadStream } from 'node:fs';
import { createHash, type Hash } from 'node:crypto';
import { open, stat } from 'node:fs/promises';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { pipeline, type Readable } from 'node:stream';
import type { CreateHistory, IngestBody, IngestResult } from '../../shared';
import { BatchedFile } from '../media/batched-file';
import { consume } from '../lib/consume';
import { HubUploadsFull, ResyncNeeded, SyncError } from './sync-error';

/** The sync protocol this replica speaks; a hub answering a lower one is too old. */
export const SYNC_PROTOCOL = 1;
export const PRODUCT = 'portfolio-manager';

/** A request whose socket stays idle this long fails (a large blob may take a while). */
const REQUEST_TIMEOUT_MS = 120_000;
/**
 * A hub that accepts a connection and then says nothing (a half-started hub, a proxy whose
 * upstream is gone) must not hold a round for two minutes: a connection must be made within
 * CONNECT_TIMEOUT_MS and the answer must start within FIRST_BYTE_TIMEOUT_MS. Such a timeout is
 * not tried again within the round: the round fails as `HUB_UNREACHABLE` (status `offline`) and
 * the rounds back off. The answer to a batch of mutations, or to an uploaded blob, starts only
 * once the hub did the work: it may take longer.
 */
export const CONNECT_TIMEOUT_MS = 5_000;
export const FIRST_BYTE_TIMEOUT_MS = 10_000;
const WORK_ANSWER_TIMEOUT_MS = 60_000;

/** Failures that were a timeout above: `retried` does not try them again. */
const timedOut = new WeakSet<Error>();

export interface Hello {
  product: string;
  protocol: number;
  version: string;
}

export interface FeedChange {
  seq: number;
  portfolioId: string;
  revision: number;
  deleted: boolean;
  portfolio?: Record<string, unknown>;
}

export interface FeedPage {
  changes: FeedChange[];
  next: number;
  hasMore: boolean;
  libraryId: string;
}

export interface Mutation {
  mutationId: string;
  portfolioId: string;
  baseRevision: number;
  op: 'create' | 'update' | 'delete' | 'restore';
  fields: Record<string, unknown>;
  files: string[];
  /** Hub conflicts resolved here (a local resolve-conflict update), removed on the hub too. */
  resolveConflicts?: string[];
  /** A create's history (DESIGN §10, §11): the hub keeps it as that portfolio's. */
  history?: CreateHistory;
}

export interface MutationResult {
  mutationId: string;
  status: 'applied' | 'merged' | 'conflict' | 'duplicate' | 'rejected';
  portfolioId: string;
  revision?: number;
  seq?: number;
  conflictId?: string;
  error?: { code: string; message: string };
}

export interface Device {
  deviceId: string;
  token: string;
  name: string;
  replicaId: string;
  username: string;
}

/** A kept part of a download is read back (to hash it) in pieces of this size. */
const READ_BYTES = 1024 * 1024;

/** A downloaded blob: its bytes are written; `durable` settles once they are fsync'd. */
export interface Download {
  bytes: number;
  sha256: string;
  durable: Promise<void>;
}

/** What `expectOk` reads of an answer: a fetch Response, or a streamed one (`answerOf`). */
type Answer = Pick<Response, 'ok' | 'status' | 'json'>;

/**
 * Blob bodies go through node:http rather than fetch: Node streams hand over the socket's
 * buffers as they are, where fetch's web streams cost a promise and a new Uint8Array per chunk
 * (a third more CPU per byte received, measured in bench/sync-transfer.ts). Keep-alive, shared
 * by the clients of one process, as fetch's global pool is; idle sockets do not hold it open.
 */
const AGENTS = {
  'http:': new HttpAgent({ keepAlive: true }),
  'https:': new HttpsAgent({ keepAlive: true }),
};

/**
 * The hub's HTTP API as the replica uses it (DESIGN §10), over real HTTP (fetch). Every failure
 * becomes a SyncError in words; `transient` ones (unreachable, 5xx) are retried by the rounds.
 */
export class HubClient {
  readonly baseUrl: string;

  constructor(
    hubUrl: string,
    private token?: string,
  ) {
    this.baseUrl = normalizeHubUrl(hubUrl);
  }

  /** Checks that the hub is a Portfolio Manager server speaking a protocol this app knows. */
  async hello(): Promise<Hello> {
    const response = await this.send('GET', '/api/v1/sync/hello', { auth: false });
    if ([502, 503, 504].includes(response.status)) {
      throw new SyncError(
        'HUB_UNREACHABLE',
        `the hub at ${this.baseUrl} cannot be reached (a gateway answered ${response.status}); sync will try again`,
        true,
      );
    }
    if (response.status >= 500) {
      throw new SyncError(
        'HUB_ERROR',
        `the hub answered ${response.status}; sync will try again`,
        true,
      );
    }
    // A connection cut while the answer comes is the hub unreachable; only whole answers that
    // are not the hello's JSON say that the address is something else.
    const text = await response.text().catch((error: unknown) => {
      throw this.unreachable(error);
    });
    let body: Partial<Hello> | undefined;
    try {
      body = JSON.parse(text) as Partial<Hello>;
    } catch {
      body = undefined;
    }
    if (!response.ok || !body || body.product !== PRODUCT) {
      throw new SyncError(
        'HUB_NOT_PORTFOLIO',
        `${this.baseUrl} is not a Portfolio Manager server (check the address)`,
      );
    }
    if (typeof body.protocol !== 'number' || body.protocol < SYNC_PROTOCOL) {
      throw new SyncError(
        'HUB_TOO_OLD',
        `hub too old: it speaks sync protocol ${body.protocol ?? 0}, this app needs ${SYNC_PROTOCOL}; update the hub`,
      );
    }
    return body as Hello;
  }

  /** Signs in once, registers this device, signs the session out; answers the device. */
  async registerDevice(
    username: string,
    password: string,
    name: string,
    replicaId: string,
  ): Promise<Device> {
    const sessionId = await this.signIn(username, password);
    try {
      const created = await this.send('POST', '/api/v1/devices', {
        token: sessionId,
        json: { name, replicaId },
      });
      if (created.status === 404) {
        throw new SyncError(
          'HUB_TOO_OLD',
          'hub too old: it cannot register devices; update the hub',
        );
      }
      if (created.status === 403) {
        throw new SyncError(
          'HUB_SIGN_IN_FAILED',
          `the hub account "${username}" may not sync: it needs the editor or admin role`,
        );
      }
      await this.expectOk(created);
      return (await created.json()) as Device;
    } finally {
      await this.signOut(sessionId);
    }
  }

  /** Signs in with a password; answers the session id (sign it out with `signOut`). */
  async signIn(username: string, password: string): Promise<string> {
    const signIn = await this.send('POST', '/api/v1/appauth', {
      auth: false,
      json: { username, password },
    });
    if (signIn.status === 401 || signIn.status === 429) {
      throw new SyncError(
        'HUB_SIGN_IN_FAILED',
        signIn.status === 429
          ? 'too many failed sign-ins on the hub; wait a few minutes and try again'
          : 'wrong username or password on the hub',
      );
    }
    await this.expectOk(signIn);
    return ((await signIn.json()) as { sessionId: string }).sessionId;
  }

  /** Ends a session `signIn` made; a failure is of no consequence (it expires). */
  async signOut(sessionId: string): Promise<void> {
    await this.send('DELETE', '/api/v1/appauth', { token: sessionId }).catch(() => undefined);
  }

  /**
   * Finds or makes a portfolio and attaches stored blobs to it (POST /api/v1/portfolio/ingest).
   * A refusal (4xx) answers the server's words instead of throwing: the caller reports it and
   * goes on with the next portfolio.
   */
  async ingest(
    body: IngestBody,
  ): Promise<{ ok: true; result: IngestResult } | { ok: false; status: number; message: string }> {
    const response = await this.send('POST', '/api/v1/portfolio/ingest', {
      json: body,
      firstByteMs: WORK_ANSWER_TIMEOUT_MS,
    });
    if (response.ok) return { ok: true, result: (await response.json()) as IngestResult };
    if (response.status >= 400 && response.status < 500 && response.status !== 401) {
      const answer = (await response.json().catch(() => undefined)) as
        { message?: string } | undefined;
      return {
        ok: false,
        status: response.status,
        message: answer?.message ?? `the server answered ${response.status}`,
      };
    }
    await this.expectOk(response);
    throw new Error('unreachable');
  }

  async changes(since: number, limit: number): Promise<FeedPage> {
    const response = await this.send('GET', `/api/v1/changes?since=${since}&limit=${limit}`);
    if (response.status === 410) {
      const body = (await response.json().catch(() => undefined)) as
        { message?: string } | undefined;
      throw new ResyncNeeded(body?.message ?? 'the hub no longer knows changes that old');
    }
    await this.expectOk(response);
    return (await response.json()) as FeedPage;
  }

  async missingBlobs(sha256: string[]): Promise<string[]> {
    const missing: string[] = [];
    for (let start = 0; start < sha256.length; start += 1000) {
      const response = await this.send('POST', '/api/v1/blobs/missing', {
        json: { sha256: sha256.slice(start, start + 1000) },
      });
      await this.expectOk(response);
      missing.push(...((await response.json()) as { missing: string[] }).missing);
    }
    return missing;
  }

  /**
   * Uploads one blob, resuming a partial upload the hub kept (HEAD answers `Upload-Offset`).
   * Answers the bytes sent.
   */
  async putBlob(sha256: string, path: string, onBytes: (n: number) => void): Promise<number> {
    const { size } = await stat(path);
    const head = await this.send('HEAD', `/api/v1/blobs/${sha256}`);
    if (head.status === 200) return 0;
    const offset = head.status === 404 ? Number(head.headers.get('upload-offset') ?? 0) : 0;
    const start = Number.isInteger(offset) && offset > 0 && offset < size ? offset : 0;
    const headers: Record<string, string> = {
      'content-type': 'application/octet-stream',
      'content-length': String(size - start),
    };
    if (start > 0) headers['content-range'] = `bytes ${start}-${size - 1}/${size}`;
    const body = createReadStream(path, { start, highWaterMark: READ_BYTES });
    body.on('data', (chunk) => onBytes(chunk.length));
    const response = await this.streamOnce('PUT', `/api/v1/blobs/${sha256}`, headers, body);
    await this.expectOk(answerOf(response));
    response.resume();
    return size - start;
  }

  /**
   * Downloads one blob to `path`, continuing a partial file there with Range. The bytes are
   * hashed as they arrive (a kept part is hashed first) and written in large pieces while the
   * next ones arrive: nothing reads the file a second time. Answers once every byte is written,
   * with the bytes received and the SHA-256 of the whole file, for the caller to compare; the
   * file's fsync runs on, and `durable` settles when it is done, so the next download need not
   * wait for the disk.
   */
  async getBlob(sha256: string, path: string, onBytes: (n: number) => void): Promise<Download> {
    const have = await stat(path).then(
      (stats) => stats.size,
      () => 0,
    );
    const headers: Record<string, string> = have > 0 ? { range: `bytes=${have}-` } : {};
    const response = await this.stream('GET', `/api/v1/blobs/${sha256}`, headers);
    const hash = createHash('sha256');
    if (response.statusCode === 416 && have > 0) {
      // The partial file is already whole.
      response.resume();
      await hashPrefix(hash, path, have);
      return { bytes: 0, sha256: hash.digest('hex'), durable: syncFile(path) };
    }
    await this.expectOk(answerOf(response));
    const resumed = response.statusCode === 206;
    if (resumed) await hashPrefix(hash, path, have); // the answer waits, unread, meanwhile
    // One fsync at the end: with several downloads at a time, theirs overlap the others' bytes.
    const file = new BatchedFile(await open(path, resumed ? 'a' : 'w'), Infinity);
    let bytes = 0;
    /** A write failed (a full disk, say): that is said as such, not as the hub's fault. */
    let writeFailed = false;
    try {
      await consume(response, new AbortController().signal, (chunk) => {
        hash.update(chunk);
        bytes += chunk.byteLength;
        onBytes(chunk.byteLength);
        return file.add(chunk)?.catch((error: unknown) => {
          writeFailed = true;
          throw error;
        });
      });
      writeFailed = true;
      await file.written();
    } catch (error) {
      // Cut short: what came is kept for the next try to resume from.
      if (!writeFailed) await file.written().catch(() => undefined);
      await file.close().catch(() => undefined);
      throw writeFailed ? error : this.unreachable(error);
    }
    const durable = file.sync().finally(() => file.close());
    durable.catch(() => {}); // awaited by the caller
    return { bytes, sha256: hash.digest('hex'), durable };
  }

  async mutations(replicaId: string, mutations: Mutation[]): Promise<MutationResult[]> {
    const response = await this.send('POST', '/api/v1/sync/mutations', {
      json: { replicaId, mutations },
      firstByteMs: WORK_ANSWER_TIMEOUT_MS,
    });
    await this.expectOk(response);
    return ((await response.json()) as { results: MutationResult[] }).results;
  }

  // ---- internals ----

  /** One request (`sendOnce`), tried again as `retried` says. */
  private send(
    method: string,
    path: string,
    options: Parameters<HubClient['sendOnce']>[2] = {},
  ): Promise<Response> {
    return retried(
      () => this.sendOnce(method, path, options),
      (response) => response.status,
      (response) => response.body?.cancel(),
    );
  }

  private async sendOnce(
    method: string,
    path: string,
    options: {
      auth?: boolean;
      token?: string;
      json?: unknown;
      headers?: Record<string, string>;
      /** How long the answer may take to start (connecting included). */
      firstByteMs?: number;
    } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token ?? (options.auth === false ? undefined : this.token);
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    }
    const wait = options.firstByteMs ?? FIRST_BYTE_TIMEOUT_MS;
    const firstByte = new AbortController();
    const timer = setTimeout(() => firstByte.abort(), wait);
    timer.unref(); // a guard never keeps a process alive by itself
    try {
      return await fetch(this.baseUrl + path, {
        method,
        headers,
        body,
        redirect: 'error',
        signal: AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS), firstByte.signal]),
      });
    } catch (error) {
      if (firstByte.signal.aborted) throw this.noAnswer(wait);
      throw this.unreachable(error);
    } finally {
      clearTimeout(timer);
    }
  }

  /** `streamOnce` without a body, tried again as `retried` says. */
  private stream(
    method: string,
    path: string,
    headers: Record<string, string>,
  ): Promise<IncomingMessage> {
    return retried(
      () => this.streamOnce(method, path, headers),
      (response) => response.statusCode ?? 0,
      (response) => response.resume(),
    );
  }

  /**
   * One request over node:http(s), its answer as a Node stream (unread: the caller reads or
   * drains it). `body` is piped in; a socket idle for REQUEST_TIMEOUT_MS fails it.
   */
  private streamOnce(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: Readable,
  ): Promise<IncomingMessage> {
    const url = new URL(this.baseUrl + path);
    const all = { ...headers, ...(this.token && { authorization: `Bearer ${this.token}` }) };
    return new Promise((resolve, reject) => {
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const request = send(
        url,
        {
          method,
          headers: all,
          agent: AGENTS[url.protocol as keyof typeof AGENTS],
          timeout: REQUEST_TIMEOUT_MS,
        },
        (response) => {
          clearTimeout(firstByte);
          resolve(response);
        },
      );
      // A body is sent first: its answer comes once the hub has it all (the idle timeout holds).
      const wait = body ? undefined : FIRST_BYTE_TIMEOUT_MS;
      let late: SyncError | undefined;
      const firstByte =
        wait === undefined
          ? undefined
          : setTimeout(() => {
              late = this.noAnswer(wait);
              request.destroy(late);
            }, wait);
      firstByte?.unref();
      request.once('socket', (socket) => {
        if (!socket.connecting) return; // a kept-alive connection
        const connect = setTimeout(() => {
          late = this.noAnswer(CONNECT_TIMEOUT_MS, 'connect');
          request.destroy(late);
        }, CONNECT_TIMEOUT_MS);
        connect.unref();
        socket.once('connect', () => clearTimeout(connect));
        socket.once('close', () => clearTimeout(connect));
      });
      request.once('timeout', () => request.destroy(new Error('no answer in time')));
      request.once('error', (error) => {
        clearTimeout(firstByte);
        reject(late ?? this.unreachable(error));
      });
      if (!body) request.end();
      else pipeline(body, request, () => {}); // a failure reaches `request`'s error
    });
  }

  /** The hub did not connect, or did not start to answer, within `ms`: not tried again now. */
  private noAnswer(ms: number, what: 'connect' | 'answer' = 'answer'): SyncError {
    const error = new SyncError(
      'HUB_UNREACHABLE',
      what === 'connect'
        ? `the hub at ${this.baseUrl} did not accept a connection within ${ms / 1000} s; sync will try again`
        : `the hub at ${this.baseUrl} did not answer within ${ms / 1000} s; sync will try again`,
      true,
    );
    timedOut.add(error);
    return error;
  }

  private unreachable(error: unknown): SyncError {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why =
      cause?.code ??
      cause?.message ??
      (error as { code?: string }).code ??
      (error as Error).message;
    return new SyncError(
      'HUB_UNREACHABLE',
      `the hub at ${this.baseUrl} cannot be reached (${networkWords(why)}); check the address and the network`,
      true,
    );
  }

  /** Turns a failed answer into words; 401/409 of the sync protocol have their own. */
  private async expectOk(response: Answer): Promise<void> {
    if (response.ok) return;
    const body = (await response.json().catch(() => undefined)) as
      { code?: string; message?: string } | undefined;
    const code = body?.code;
    if (code === 'DEVICE_REVOKED' || (response.status === 401 && this.token)) {
      throw new SyncError(
        'SYNC_DEVICE_REVOKED',
        'this device was signed out of the hub; sign in again under Settings → Team server',
      );
    }
    if (code === 'REPLICA_ID_TAKEN') {
      throw new SyncError(
        'SYNC_REPLICA_ID_TAKEN',
        'another device already syncs with this replica id; sign in again to get a new one',
      );
    }
    if (code === 'UPLOAD_QUOTA_EXCEEDED' || code === 'UPLOAD_SPACE_FULL') {
      throw new HubUploadsFull(body?.message);
    }
    if (response.status === 403) {
      throw new SyncError(
        'HUB_SIGN_IN_FAILED',
        `the hub refused: ${body?.message ?? 'this account may not sync (it needs the editor or admin role)'}`,
      );
    }
    if (response.status === 404 && !body?.code) {
      throw new SyncError('HUB_NOT_PORTFOLIO', `${this.baseUrl} is not a Portfolio Manager server`);
    }
    if (response.status === 404 && code === 'ROUTE_NOT_FOUND') {
      throw new SyncError('HUB_TOO_OLD', 'hub too old: it lacks a sync endpoint; update the hub');
    }
    throw new SyncError(
      'HUB_ERROR',
      `the hub answered ${response.status}${body?.message ? `: ${body.message}` : ''}`,
      response.status >= 500 || response.status === 408 || response.status === 429,
    );
  }
}

/** `http://host:port` without a trailing slash or path; anything else is refused in words. */
export function normalizeHubUrl(hubUrl: string): string {
  let url: URL;
  try {
    url = new URL(hubUrl);
  } catch {
    throw new SyncError('HUB_UNREACHABLE', `"${hubUrl}" is not a web address (http://host:port)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new SyncError('HUB_UNREACHABLE', `"${hubUrl}" is not an http or https address`);
  return url.origin + url.pathname.replace(/\/+$/, '');
}

/** Feeds the first `length` bytes of the file at `path` to `hash` (a resumed download). */
async function hashPrefix(hash: Hash, path: string, length: number): Promise<void> {
  const stream = createReadStream(path, { end: length - 1, highWaterMark: READ_BYTES });
  for await (const chunk of stream) hash.update(chunk as Buffer);
}

async function syncFile(path: string): Promise<void> {
  const file = await open(path, 'r+');
  try {
    await file.sync();
  } finally {
    await file.close();
  }
}

/**
 * Tries a request again (up to 3 times, short pauses) when the hub fails transiently (5xx,
 * connection cut): every sync request sent this way is safe to repeat (mutations by id, blobs
 * by content). A failed answer is dropped before the next try.
 */
async function retried<T>(
  once: () => Promise<T>,
  status: (answer: T) => number,
  drop: (answer: T) => unknown,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      const answer = await once();
      if (status(answer) < 500 || attempt >= 3) return answer;
      await drop(answer);
    } catch (error) {
      // A hub that said nothing for seconds is not asked again at once: the rounds back off.
      if (attempt >= 3 || timedOut.has(error as Error)) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
  }
}

/** A streamed answer as `expectOk` reads it: its body is read only when it failed. */
function answerOf(response: IncomingMessage): Answer {
  const status = response.statusCode ?? 0;
  return {
    ok: status >= 200 && status < 300,
    status,
    json: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of response) chunks.push(chunk as Buffer);
      return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    },
  };
}

/** A network failure's code (ECONNREFUSED, UND_ERR_SOCKET…) in the words a user reads. */
function networkWords(code: string | undefined): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'nothing answers at that address';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
    case 'terminated':
    case 'other side closed':
      return 'the connection was cut';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'that name is not known';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'no connection in time';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ENETDOWN':
      return 'no route to it';
    default:
      return 'the network failed';
  }
}
