import { resolve } from 'node:path';
import { text } from 'node:stream/consumers';
import { resolveConfig } from '../config';
import { ScanError } from '../ingest/scan-folder';
import { HubClient } from '../sync/hub-client';
import { SyncError } from '../sync/sync-error';
import { CommandFailed, EXIT, UsageError, print, type Command } from './command';

/** `portfolio ingest DIR`: one portfolio per sub-folder, sent to a running server. */
export const ingestCommand: Command = {
  name: 'ingest',
  args: '<dir>',
  summary:
    'Make one portfolio per sub-folder of a folder on a running server, sending only new files.',
  flags: [
    {
      name: 'server',
      value: '<url>',
      env: 'PORTFOLIO_SERVER',
      description: 'the Portfolio Manager server, e.g. http://server:8080',
    },
    { name: 'username', value: '<name>', description: 'sign in as this editor or admin' },
    {
      name: 'password-stdin',
      description: 'read the password from standard input (else PORTFOLIO_PASSWORD)',
    },
    {
      name: 'token',
      value: '<token>',
      env: 'PORTFOLIO_TOKEN',
      description: 'a device token instead of a username and password',
    },
    {
      name: 'member-barcode',
      value: '<barcode>',
      description: "each portfolio's member barcode, unless its portfolio.json gives one",
    },
    {
      name: 'category',
      value: '<category>',
      description: "each portfolio's category, unless its portfolio.json gives one",
    },
    {
      name: 'state',
      value: '<file>',
      description: 'where the resume state is kept (default: in the user cache folder)',
    },
  ],
  env: [{ name: 'PORTFOLIO_PASSWORD', description: 'with --username: the password' }],
  notes:
    'Each sub-folder of <dir> becomes one portfolio, titled with the folder name, found again\n' +
    'by member barcode and title when run again. Its first image by name is the cover, the\n' +
    'other images the drafting process, documents (PDF, Office, text, ZIP) additional documents.\n' +
    'A portfolio.json in a sub-folder may give portfolio fields (memberBarcode, category,\n' +
    'projectTitle, projectDetail, generalTag…) and "cover": the name of the cover image.\n' +
    'Without projectDetail, the title is used. Empty, hidden, unreadable and unsupported files,\n' +
    'links to folders and links pointing outside <dir> are skipped and listed.\n' +
    'Every file is hashed first; only files the server lacks are sent. A run cut short resumes\n' +
    'where it stopped when started again, and a run again adds nothing twice.\n' +
    'Progress (files, bytes, rate, time left) goes to standard error.\n' +
    'Exit status: 0 every folder ingested, 1 some failed (the reason is printed), 2 usage.',
  async run(input) {
    const dir = resolve(input.positionals[0]!);
    const server = input.option('server');
    if (!server) throw new UsageError('missing --server');
    const token = input.option('token');
    const username = input.option('username');
    if (token !== undefined && username !== undefined)
      throw new UsageError('give --token or --username, not both');
    if (token === undefined && username === undefined)
      throw new UsageError('missing --username (or --token)');
    const password =
      username === undefined
        ? undefined
        : input.flag('password-stdin')
          ? (await text(process.stdin)).replace(/\r?\n$/, '')
          : input.env.PORTFOLIO_PASSWORD;
    if (username !== undefined && !password)
      throw new UsageError('--username needs PORTFOLIO_PASSWORD or --password-stdin');

    const { runIngest } = await import('../ingest/run-ingest');
    let client: InstanceType<typeof HubClient>;
    let session: string | undefined;
    try {
      client = new HubClient(server);
      if (username !== undefined) {
        session = await client.signIn(username, password!);
        client = new HubClient(server, session);
      } else {
        client = new HubClient(server, token);
      }
    } catch (error) {
      throw new CommandFailed(words(error));
    }
    try {
      const summary = await runIngest({
        dir,
        client,
        statePath: input.option('state'),
        defaults: {
          memberBarcode: input.option('member-barcode'),
          category: input.option('category'),
        },
        maxPixels: resolveConfig({ dataDir: dir }).limits.imagePixels, // the default; the server has the last word
        env: input.env,
        print,
      });
      print(
        `Done: ${summary.created} made, ${summary.added} added to, ${summary.unchanged} unchanged, ` +
          `${summary.failed} failed; ${summary.filesAdded} file(s) attached, ${summary.blobsSent} ` +
          `sent (${summary.bytesSent} bytes), ${summary.skipped} skipped.`,
      );
      return summary.failed > 0 ? EXIT.failed : EXIT.ok;
    } catch (error) {
      throw new CommandFailed(words(error));
    } finally {
      if (session) await client.signOut(session);
    }
  },
};

/** A failure in the words of this command: a server, not a sync hub. */
function words(error: unknown): string {
  if (error instanceof ScanError) return error.message;
  if (error instanceof SyncError) {
    if (error.code === 'SYNC_DEVICE_REVOKED')
      return 'the server refused the token (revoked, expired or mistyped); make a new one';
    return error.message.replace(/\bhub\b/g, 'server').replace(/; sync will try again$/, '');
  }
  return error instanceof Error ? error.message : String(error);
}
