import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { SerialQueue } from '../../server/lib/serial-queue';

/** Why LAN sharing could not be turned on, in words for the settings screen. */
export class LanSharingError extends Error {
  override readonly name = 'LanSharingError';
}

export interface ServerHostOptions {
  /** Builds the app (buildApp with the desktop's options); the seam tests use. */
  build: () => Promise<FastifyInstance>;
  /** Loopback port for the window; 0 picks a free one (the default). */
  loopbackPort?: number;
  /** Address the LAN listener binds; all IPv4 interfaces unless a test says otherwise. */
  lanHost?: string;
  /** How long LAN clients may finish their requests when sharing stops. */
  drainMs?: number;
}

function lanErrorMessage(error: NodeJS.ErrnoException, port: number): string {
  switch (error.code) {
    case 'EADDRINUSE':
      return `Port ${port} is already in use by another program. Choose another port.`;
    case 'EACCES':
      return `This computer does not allow the app to listen on port ${port}. Choose another port.`;
    case 'EADDRNOTAVAIL':
      return 'No network interface is available for sharing.';
    default:
      return `Could not share on port ${port}: ${error.message}`;
  }
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen({ host, port }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/**
 * Hosts the embedded server in the main process. The window always talks to a loopback
 * listener on a free port (its origin never changes, so toggling LAN sharing does not reload
 * the window or lose its session storage); LAN sharing adds a second listener on 0.0.0.0 for
 * the same app. That is how Fastify itself serves extra bindings (`http.createServer` around
 * `app.routing`), so both listeners share every route, hook and the one storage.
 */
export class ServerHost {
  private instance: FastifyInstance | null = null;
  private loopbackOrigin = '';
  private lan: { server: Server; port: number } | null = null;
  /** LAN changes run one at a time: two quick toggles must not race over the listener. */
  private readonly lanChanges = new SerialQueue();
  private stopping: Promise<void> | null = null;

  constructor(private readonly options: ServerHostOptions) {}

  /** Builds the app and listens on loopback. Throws DataDirInUseError when the dir is taken. */
  async start(): Promise<string> {
    if (this.instance) return this.loopbackOrigin;
    const app = await this.options.build();
    // Loopback only until the owner shares: enables the DNS-rebinding Host check.
    app.shell.setLoopbackOnly(true);
    try {
      await app.listen({ host: '127.0.0.1', port: this.options.loopbackPort ?? 0 });
    } catch (error) {
      await app.close();
      throw error;
    }
    const { port } = app.server.address() as AddressInfo;
    this.instance = app;
    this.loopbackOrigin = `http://127.0.0.1:${port}`;
    return this.loopbackOrigin;
  }

  get app(): FastifyInstance {
    if (!this.instance) throw new Error('The server has not started.');
    return this.instance;
  }

  /** The window's origin, e.g. http://127.0.0.1:53124. */
  get origin(): string {
    if (!this.instance) throw new Error('The server has not started.');
    return this.loopbackOrigin;
  }

  /** The port shared on the LAN, or null while not sharing. */
  get lanPort(): number | null {
    return this.lan?.port ?? null;
  }

  /**
   * Listens on all interfaces at `port` as well. Changing the port opens the new listener
   * before closing the old one, so a taken port leaves the current sharing as it was.
   */
  shareOnLan(port: number): Promise<void> {
    return this.lanChanges.run(async () => {
      const app = this.app;
      if (this.lan?.port === port) return;
      const server = createServer(app.routing);
      // Same connection timing as the loopback listener Fastify configured.
      server.keepAliveTimeout = app.server.keepAliveTimeout;
      server.requestTimeout = app.server.requestTimeout;
      try {
        await listen(server, this.options.lanHost ?? '0.0.0.0', port);
      } catch (error) {
        throw new LanSharingError(lanErrorMessage(error as NodeJS.ErrnoException, port));
      }
      const previous = this.lan;
      this.lan = { server, port };
      // LAN clients use addresses like 192.168.1.20: the loopback Host check must be off.
      app.shell.setLoopbackOnly(false);
      if (previous) await this.drain(previous.server);
    });
  }

  /** Stops accepting LAN connections; requests under way get `drainMs` to finish. */
  stopLanSharing(): Promise<void> {
    return this.lanChanges.run(async () => {
      const current = this.lan;
      if (!current) return;
      this.lan = null;
      await this.drain(current.server);
      this.instance?.shell.setLoopbackOnly(true);
    });
  }

  /** Stops both listeners and closes the app, which flushes writes and releases the data dir. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.stopLanSharing().catch(() => {});
      const app = this.instance;
      if (app) await app.close();
    })();
    return this.stopping;
  }

  private drain(server: Server): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => server.closeAllConnections(), this.options.drainMs ?? 2000);
      server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      server.closeIdleConnections();
    });
  }
}
