import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface CliProcess {
  child: ChildProcess;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout + stderr; rejects on exit or timeout. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the API base URL printed by `serve` (e.g. http://127.0.0.1:41234). */
  url(timeoutMs?: number): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

/**
 * Runs the CLI (`server/cli.ts`, the `portfolio` command) as a real child process: one node
 * process running the TypeScript through tsx's loader, so the pid we signal is the server
 * itself. PORTFOLIO_* of the test runner's environment are dropped; `env` sets them. `stdin`,
 * when given, is piped in and closed; otherwise standard input is empty.
 */
export function spawnCli(
  args: string[],
  env: Record<string, string> = {},
  stdin?: string,
): CliProcess {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('PORTFOLIO_')),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/cli.ts', ...args], {
    cwd: ROOT,
    env: { ...base, ...env },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (stdin !== undefined) child.stdin!.end(stdin);
  running.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      running.delete(child);
      // Let the pipes drain before anyone reads the output.
      setImmediate(() => resolve({ code, signal }));
    }),
  );

  const waitFor = (pattern: RegExp, timeoutMs = 20_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = (out + err).match(pattern);
        if (match) {
          done();
          resolve(match);
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out waiting for ${pattern}; output:\n${out}${err}`));
      }, timeoutMs);
      const onExit = () =>
        setImmediate(() => {
          check();
          done();
          reject(new Error(`process exited before ${pattern}; output:\n${out}${err}`));
        });
      const done = () => {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        child.stderr!.off('data', check);
        child.off('exit', onExit);
      };
      child.stdout!.on('data', check);
      child.stderr!.on('data', check);
      child.on('exit', onExit);
      check();
    });

  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor,
    url: async (timeoutMs) => (await waitFor(/API: +(http:\/\/\S+)\/api\/v1/, timeoutMs))[1]!,
    exited,
  };
}

/** SIGKILLs every CLI process a test left running (by its own pid). */
export async function killRunningClis(): Promise<void> {
  const children = [...running];
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}
