import pg from 'pg';

/**
 * The one channel every instance on a database LISTENs to: a write that makes another
 * instance's cached copy wrong sends a notice on it (`pg_notify` in the write's own statement, so
 * it is delivered if and only if the write commits). A notice is a nudge only: its receiver drops
 * what it names and reads the database again on next use.
 */
export const CHANGES_CHANNEL = 'portfolio_changes';

/**
 * What a notice's payload (JSON) says. Receivers ignore kinds they do not know, so a new kind
 * can be added without touching the existing receivers.
 */
export type ChangeNotice =
  /** These sessions or device tokens (SHA-256 of the id, hex) ended. */
  | { kind: 'sessions'; hashes: string[] }
  /** This user changed or is gone (and perhaps all of their sessions with them). */
  | { kind: 'user'; username: string }
  /** Sessions ended, too many to name (an expiry sweep): drop every cached session. */
  | { kind: 'all-sessions' };

/** PostgreSQL's limit on a payload is 8000 bytes; a notice naming more sessions says "all". */
export const MAX_HASHES_PER_NOTICE = 100;

/** A cache kept right by the notices. */
export interface ChangeSubscriber {
  notice(notice: ChangeNotice): void;
  /**
   * The listening connection is gone (or never came up): notices may be missed from now on, so
   * nothing cached may be trusted until `listening` is called again.
   */
  lost(): void;
  /** Listening (again): every change committed from now on will be noticed. */
  listening(): void;
}

export interface ChangeListenerOptions {
  logger?: { info(message: string): void; warn(message: string): void };
  /** First wait before reconnecting; doubled on each failure up to `maxBackoffMs`. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * One dedicated connection (not from the pool: a pooled one would be handed to queries and its
 * LISTEN lost with its next reset) that LISTENs on CHANGES_CHANNEL and tells the subscribers.
 * When the connection is lost its subscribers are told at once, and it reconnects with
 * exponential backoff (with jitter, so instances that lost the database together do not come back
 * in step).
 */
export class ChangeListener {
  private client: pg.Client | null = null;
  private up = false;
  private closed = false;
  private failures = 0;
  private retry: NodeJS.Timeout | undefined;
  private started: Promise<void> | undefined;
  private readonly subscribers = new Set<ChangeSubscriber>();
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(
    private readonly connection: pg.ClientConfig,
    private readonly options: ChangeListenerOptions = {},
  ) {
    this.minBackoffMs = options.minBackoffMs ?? 100;
    this.maxBackoffMs = options.maxBackoffMs ?? 5_000;
  }

  /** Whether notices are being received right now. */
  get listening(): boolean {
    return this.up;
  }

  /** The backend pid of the listening connection (for tests that cut it), or undefined. */
  get backendPid(): number | undefined {
    return this.up ? (this.client as unknown as { processID?: number })?.processID : undefined;
  }

  subscribe(subscriber: ChangeSubscriber): () => void {
    this.subscribers.add(subscriber);
    if (this.up) subscriber.listening();
    else subscriber.lost();
    return () => this.subscribers.delete(subscriber);
  }

  /**
   * Connects (once; later calls answer the same promise); resolves once listening or once the
   * first attempt failed (a retry is then scheduled).
   */
  start(): Promise<void> {
    return (this.started ??= this.connect());
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.drop(client);
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      ...this.connection,
      application_name: 'portfolio-manager-listen',
      // A peer that vanished without closing (network cut) is found by TCP keep-alive; until
      // then the caches' own time limit bounds what a missed notice can leave stale.
      keepAlive: true,
      keepAliveInitialDelayMillis: 5_000,
    });
    this.client = client;
    client.on('error', (error) => this.fail(client, error));
    client.on('end', () => this.fail(client));
    client.on('notification', (message) => {
      if (client === this.client && message.channel === CHANGES_CHANNEL)
        this.dispatch(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (error) {
      this.fail(client, error as Error);
      return;
    }
    if (client !== this.client || this.closed) return; // lost or closed meanwhile
    this.up = true;
    if (this.failures > 0)
      this.options.logger?.info('Listening for changes from other instances again');
    this.failures = 0;
    for (const subscriber of this.subscribers) subscriber.listening();
  }

  /** The connection broke (or could not be made): tell the subscribers, then try again later. */
  private fail(client: pg.Client, error?: Error): void {
    if (client !== this.client) return;
    const wasUp = this.up;
    this.drop(client);
    void client.end().catch(() => {});
    if (this.closed) return;
    if (wasUp || this.failures === 0) {
      this.options.logger?.warn(
        `Lost the connection that listens for other instances' changes` +
          `${error ? ` (${error.message})` : ''}; reading sessions from the database until it is back`,
      );
    }
    const backoff = Math.min(this.maxBackoffMs, this.minBackoffMs * 2 ** this.failures++);
    this.retry = setTimeout(() => void this.connect(), backoff * (0.5 + Math.random() / 2));
    this.retry.unref();
  }

  private drop(client: pg.Client | null): void {
    if (client === null || client !== this.client) return;
    this.client = null;
    this.up = false;
    for (const subscriber of this.subscribers) subscriber.lost();
  }

  private dispatch(payload: string | undefined): void {
    let notice: ChangeNotice;
    try {
      notice = JSON.parse(payload ?? '') as ChangeNotice;
    } catch {
      this.options.logger?.warn(`Ignored a notice on ${CHANGES_CHANNEL} that is not JSON`);
      return;
    }
    for (const subscriber of this.subscribers) subscriber.notice(notice);
  }
}
