#!/usr/bin/env node
import packageJson from '../package.json' with { type: 'json' };
import {
  CommandFailed,
  EXIT,
  UsageError,
  commandHelp,
  overviewHelp,
  parseCommand,
  print,
  type Command,
} from './cli/command';
import {
  backupCreateCommand,
  backupListCommand,
  backupRestoreCommand,
  backupVerifyCommand,
} from './cli/backup';
import { ingestCommand } from './cli/ingest';
import { serveCommand } from './cli/serve';
import { storageMigrateCommand } from './cli/storage';
import { syncCommand } from './cli/sync';
import { exportCommand, importCommand } from './cli/transfer';
import { usersListCommand, usersResetPasswordCommand } from './cli/users';

/*
 * `portfolio`, the one command line (DESIGN §14): this file only picks the command; each lives
 * in server/cli/ and describes its own flags, from which its parser and help are made.
 */

const COMMANDS: Command[] = [
  serveCommand,
  backupCreateCommand,
  backupListCommand,
  backupVerifyCommand,
  backupRestoreCommand,
  storageMigrateCommand,
  syncCommand,
  exportCommand,
  importCommand,
  ingestCommand,
  usersListCommand,
  usersResetPasswordCommand,
];
const TITLE = `Portfolio Manager ${packageJson.version}`;

/** The command whose words start `args` (the longest such), or a group name such as "users". */
function findCommand(args: string[]): { command: Command; rest: string[] } | { group: string } {
  const matches = COMMANDS.filter((command) =>
    command.name.split(' ').every((word, index) => args[index] === word),
  ).sort((a, b) => b.name.length - a.name.length);
  const command = matches[0];
  if (command) return { command, rest: args.slice(command.name.split(' ').length) };
  const word = args[0] ?? '';
  if (COMMANDS.some((candidate) => candidate.name.startsWith(`${word} `))) return { group: word };
  throw new UsageError(`unknown command "${word}"`);
}

function show(text: string): number {
  print(text);
  return EXIT.ok;
}

async function run(args: string[]): Promise<number> {
  const first = args[0];
  if (first === undefined) throw new UsageError('missing command');
  if (first === '--help' || first === '-h') return show(overviewHelp(COMMANDS, TITLE));
  if (first === '--version' || first === '-v') return show(packageJson.version);
  if (first.startsWith('-')) throw new UsageError(`a command comes first, not "${first}"`);

  const found = findCommand(args);
  if ('group' in found) {
    const members = COMMANDS.filter((command) => command.name.startsWith(`${found.group} `));
    const next = args[1];
    if (next === '--help' || next === '-h') return show(overviewHelp(members, TITLE));
    const names = members.map((command) => command.name.split(' ')[1]).join(' or ');
    throw new UsageError(
      next === undefined || next.startsWith('-')
        ? `missing ${found.group} command (${names})`
        : `unknown command "${found.group} ${next}"`,
    );
  }
  const input = parseCommand(found.command, found.rest, process.env);
  if (input.help) return show(commandHelp(found.command));
  return found.command.run(input);
}

/** The command or group named in `args`, for pointing at its help; "" for the top level. */
function helpTarget(args: string[]): string {
  try {
    const found = findCommand(args.filter((arg) => !arg.startsWith('-')));
    return 'group' in found ? found.group : found.command.name;
  } catch {
    return '';
  }
}

const args = process.argv.slice(2);
run(args).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      const target = helpTarget(args);
      console.error(`error: ${error.message} (see: portfolio ${target ? `${target} ` : ''}--help)`);
      process.exitCode = EXIT.usage;
    } else if (error instanceof CommandFailed) {
      console.error(`error: ${error.message}`);
      process.exitCode = error.exitCode;
    } else {
      console.error(error);
      process.exitCode = EXIT.failed;
    }
  },
);
