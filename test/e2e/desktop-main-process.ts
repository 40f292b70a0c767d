import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The built Electron main process (out/main/index.js) run by plain Node, with `electron`
 * replaced by test/electron/stand-in/electron.mjs. The stand-in reports what the main process
 * asked of Electron as events, and carries out commands (an IPC invoke, a menu click, closing
 * the window) the way Electron would deliver them.
 */

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const MAIN_BUNDLE = join(ROOT, 'out/main/index.js');
export const PRELOAD_BUNDLE = join(ROOT, 'out/preload/index.cjs');
const REGISTER = join(ROOT, 'test/electron/stand-in/register.mjs');

/** Why the desktop bundles cannot be booted, or null when they are built. */
export function missingBuild(): string | null {
  const missing = [MAIN_BUNDLE, PRELOAD_BUNDLE, join(ROOT, 'out/renderer/index.html')].filter(
    (path) => !existsSync(path),
  );
  return missing.length ? `not built (${missing.join(', ')} missing)` : null;
}

export interface StandInEvent {
  name: string;
  [detail: string]: unknown;
}

type Reply = { type: 'reply'; id: number; value?: unknown; error?: string };

export class DesktopMainProcess {
  readonly events: StandInEvent[] = [];
  readonly exited: Promise<number | null>;
  private output = '';
  private nextId = 1;
  private readonly pending = new Map<number, (reply: Reply) => void>();
  private readonly waiters = new Set<() => void>();

  private constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    child.on('message', (message: { type: string } & Record<string, unknown>) => {
      if (message.type === 'event') {
        const { type: _type, ...event } = message;
        this.events.push(event as StandInEvent);
        for (const wake of this.waiters) wake();
      } else if (message.type === 'reply') {
        this.pending.get(message.id as number)?.(message as unknown as Reply);
      }
    });
    this.exited = new Promise((resolve) =>
      child.on('exit', (code) => {
        for (const wake of this.waiters) wake();
        resolve(code);
      }),
    );
  }

  /** Starts the main process with `userData` as its profile and data folder underneath. */
  static launch(userData: string, env: Record<string, string> = {}): DesktopMainProcess {
    const base = Object.fromEntries(
      Object.entries(process.env).filter(
        ([key]) => !key.startsWith('PORTFOLIO_') && key !== 'ELECTRON_RENDERER_URL',
      ),
    );
    const child = spawn(process.execPath, ['--import', REGISTER, MAIN_BUNDLE], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: {
        ...base,
        PORTFOLIO_USER_DATA_DIR: userData,
        PORTFOLIO_DATA_DIR: join(userData, 'data'),
        PORTFOLIO_LOG_LEVEL: 'warn',
        ...env,
      },
    });
    return new DesktopMainProcess(child);
  }

  /** stdout and stderr so far, for failure messages. */
  log(): string {
    return this.output;
  }

  named(name: string): StandInEvent[] {
    return this.events.filter((event) => event.name === name);
  }

  /** The first event called `name` after the first `after` events; waits for it if need be. */
  async event(name: string, after = 0, timeoutMs = 60_000): Promise<StandInEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.slice(after).find((event) => event.name === name);
      if (found) return found;
      if (this.child.exitCode !== null || Date.now() > deadline)
        throw new Error(`No "${name}" event; the main process said:\n${this.output}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, 250);
        this.waiters.add(wake);
      });
    }
  }

  /** Sends a command to the stand-in; resolves with its answer, rejects with its error. */
  request(type: string, payload: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (reply) => {
        this.pending.delete(id);
        if (reply.error !== undefined) reject(new Error(reply.error));
        else resolve(reply.value);
      });
      this.child.send({ type, id, ...payload });
    });
  }

  /** Ends the process if a test left it running. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}
