import { resolve } from 'node:path';
import { DataDirInUseError } from '../storage/embedded/data-dir-lock';
import { normalizeHubUrl } from '../sync/hub-client';
import { CommandFailed, DATA_DIR_FLAG, EXIT, UsageError, print, type Command } from './command';
import { requireLibrary } from './library-dir';

/** `--hub` with the account from the environment, shared by `serve` and `sync`. */
export const HUB_FLAG = {
  name: 'hub',
  value: '<url>',
  env: 'PORTFOLIO_HUB',
  description: 'sync with this team server (a Portfolio Manager hub), e.g. http://hub:8080',
};

export const HUB_ENV = [
  {
    name: 'PORTFOLIO_HUB_USERNAME',
    description: 'with --hub: the hub account (editor or admin) to sign in once',
  },
  {
    name: 'PORTFOLIO_HUB_PASSWORD',
    description: 'with --hub: its password; used once for a device token, never stored',
  },
];

/** The hub sign-in of `--hub`, or undefined without it; a missing account is a usage error. */
export function hubOf(
  url: string | undefined,
  env: NodeJS.ProcessEnv,
): { url: string; username: string; password: string } | undefined {
  if (url === undefined) return undefined;
  const username = env.PORTFOLIO_HUB_USERNAME;
  const password = env.PORTFOLIO_HUB_PASSWORD;
  if (!username || !password)
    throw new UsageError('--hub needs PORTFOLIO_HUB_USERNAME and PORTFOLIO_HUB_PASSWORD');
  return { url, username, password };
}

/** `portfolio sync`: one round for a data directory no server holds. */
export const syncCommand: Command = {
  name: 'sync',
  summary: 'Run one sync round with the team server for a stopped data directory.',
  flags: [DATA_DIR_FLAG, HUB_FLAG],
  env: HUB_ENV,
  notes:
    'The data directory must hold a library: only "serve" creates one. Without --hub, the hub\n' +
    'the data directory was set up with is used. With --hub, it signs in once (unless already\n' +
    'set up for that hub) and keeps only a device token.\n' +
    'Exit status: 0 the round ended well, 1 it failed (the reason is printed), 2 usage.',
  async run(input) {
    const dataDir = resolve(input.option('data-dir') ?? 'data');
    const hub = hubOf(input.option('hub'), input.env);
    // Before the app opens it: opening an empty folder would start a library there.
    await requireLibrary(dataDir);
    const { buildApp } = await import('../app');
    const app = await buildApp({
      dataDir,
      logger: false,
      sync: { intervalMs: 0, hub },
    }).catch((error: unknown) => {
      if (error instanceof DataDirInUseError) throw new CommandFailed(error.message);
      throw error;
    });
    try {
      const replica = app.replica;
      if (!replica) throw new CommandFailed('this data directory cannot sync');
      const config = replica.config();
      if (hub && config?.hubUrl !== normalizeHubUrl(hub.url)) {
        // Signing in to the hub named by --hub failed (the words say why): never another hub.
        throw new CommandFailed(
          replica.status().lastError?.message ?? `cannot set up the hub ${hub.url}`,
        );
      }
      if (!config) {
        const why = replica.status().lastError?.message;
        throw new CommandFailed(
          why ?? 'no team server is set up for this data directory; pass --hub with the account',
        );
      }
      print(`Syncing ${dataDir} with ${config.hubUrl} as ${config.username}`);
      let lastLine = '';
      const progress = setInterval(() => {
        const { progress: p } = replica.status();
        const line = `  ${p.done}/${p.total} records, ${p.bytes} bytes`;
        if (line !== lastLine) print((lastLine = line));
      }, 1000);
      try {
        const summary = await replica.run();
        print(
          `Done: pulled ${summary.pulled}, pushed ${summary.pushed}, conflicts ${summary.conflicts}, ` +
            `files ${summary.blobsDown} down (${summary.bytesDown} bytes) / ${summary.blobsUp} up ` +
            `(${summary.bytesUp} bytes) in ${summary.durationMs} ms`,
        );
        const rejected = replica.status().lastError;
        if (rejected) print(`Note: ${rejected.message}`);
        return EXIT.ok;
      } catch (error) {
        throw new CommandFailed((error as Error).message);
      } finally {
        clearInterval(progress);
      }
    } finally {
      await app.close();
    }
  },
};
