import { parseArgs } from 'node:util';

/**
 * One subcommand of `portfolio`, described as data: the parser and every help text are made
 * from the same description, so a flag cannot exist without being listed.
 */
export interface Command {
  /** The words after `portfolio`, e.g. "users reset-password". */
  name: string;
  /** Positional arguments in usage notation, e.g. "<username>"; each `<…>` is required. */
  args?: string;
  /** One line for the command list. */
  summary: string;
  flags: Flag[];
  /** Environment variables read without a flag of their own. */
  env?: EnvVar[];
  /** Paragraphs printed under the options. */
  notes?: string;
  /** Runs the command; resolves to the exit status. */
  run(input: CommandInput): Promise<number>;
}

export interface Flag {
  /** Long name without dashes, e.g. "data-dir". */
  name: string;
  /** Placeholder of the flag's value, e.g. "<path>"; a flag without one is a switch. */
  value?: string;
  /** Environment variable read when the flag is not given. */
  env?: string;
  description: string;
}

export interface EnvVar {
  name: string;
  description: string;
}

export interface CommandInput {
  positionals: string[];
  /** The flag's value, else its environment variable's, else undefined. */
  option(name: string): string | undefined;
  /** Whether a switch was given. */
  flag(name: string): boolean;
  env: NodeJS.ProcessEnv;
}

/** The command line is wrong: one line on stderr, exit status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The command could not do its job (the data directory is in use, no such user): exit 1. */
export class CommandFailed extends Error {
  override readonly name: string = 'CommandFailed';
  /** The exit status: 1, or 2 when the setup must change first (an unusable database). */
  readonly exitCode: number = 1;
}

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** `--data-dir`, which every command takes. */
export const DATA_DIR_FLAG: Flag = {
  name: 'data-dir',
  value: '<path>',
  env: 'PORTFOLIO_DATA_DIR',
  description: 'database and files (default ./data)',
};

const HELP_FLAG: Flag = { name: 'help', description: 'show this help' };

/**
 * Parses `args` against the command's flags. Flags win over their environment variables.
 * Throws UsageError for an unknown flag, a missing value or a wrong number of arguments.
 */
export function parseCommand(
  command: Command,
  args: string[],
  env: NodeJS.ProcessEnv,
): CommandInput & { help: boolean } {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: {
        ...Object.fromEntries(
          command.flags.map((flag) => [flag.name, { type: flag.value ? 'string' : 'boolean' }]),
        ),
        help: { type: 'boolean', short: 'h' },
      } as const,
    });
  } catch (error) {
    // Node's messages go on with advice about `--`; the first sentence says what is wrong.
    throw new UsageError((error as Error).message.split('. ')[0]!);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const help = values.help === true;
  const expected = (command.args?.match(/<[^>]+>/g) ?? []).length;
  if (!help && parsed.positionals.length !== expected) {
    throw new UsageError(
      parsed.positionals.length > expected
        ? `unexpected argument "${parsed.positionals[expected]}"`
        : `missing ${command.args!.split(' ')[parsed.positionals.length]}`,
    );
  }
  const byName = new Map(command.flags.map((flag) => [flag.name, flag]));
  return {
    help,
    positionals: parsed.positionals,
    env,
    option: (name) => {
      const value = values[name];
      if (typeof value === 'string') return value;
      const variable = byName.get(name)?.env;
      return variable ? env[variable] : undefined;
    },
    flag: (name) => values[name] === true,
  };
}

function usageLine(command: Command): string {
  return `portfolio ${command.name}${command.args ? ` ${command.args}` : ''} [options]`;
}

function table(rows: [string, string, string][]): string[] {
  const widths = [0, 1].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map(([a, b, c]) =>
    `  ${a.padEnd(widths[0]! + 2)}${b.padEnd(widths[1]! + 2)}${c}`.trimEnd(),
  );
}

/** The options and environment variables of one command, as lines. */
function optionLines(command: Command): string[] {
  const flags = [...command.flags, HELP_FLAG].map((flag): [string, string, string] => [
    `${flag.name === 'help' ? '-h, ' : ''}--${flag.name}${flag.value ? ` ${flag.value}` : ''}`,
    flag.env ?? '',
    flag.description,
  ]);
  const env = (command.env ?? []).map((variable): [string, string, string] => [
    '',
    variable.name,
    variable.description,
  ]);
  return table([...flags, ...env]);
}

/** `portfolio <command> --help`. */
export function commandHelp(command: Command): string {
  return [
    `Usage: ${usageLine(command)}`,
    '',
    command.summary,
    '',
    'Options (flag, environment variable, meaning; flags win):',
    ...optionLines(command),
    ...(command.notes ? ['', command.notes] : []),
    '',
  ].join('\n');
}

/** `portfolio --help`: every command with all of its options, so one page lists everything. */
export function overviewHelp(commands: Command[], title: string): string {
  const list = table(
    commands.map((command): [string, string, string] => [
      `${command.name}${command.args ? ` ${command.args}` : ''}`,
      '',
      command.summary,
    ]),
  );
  const details = commands.flatMap((command) => [
    '',
    `portfolio ${command.name}${command.args ? ` ${command.args}` : ''}:`,
    ...optionLines(command),
  ]);
  return [
    title,
    '',
    'Usage: portfolio <command> [options]',
    '       portfolio <command> --help',
    '',
    'Commands:',
    ...list,
    ...details,
    '',
    'Exit status: 0 done, 1 failed (e.g. the data directory is in use), 2 bad command line\n' +
      '(or a database that cannot be used).',
    '',
  ].join('\n');
}

/** A line for the person at the terminal (not a log line). */
export function print(text: string): void {
  process.stdout.write(`${text}\n`);
}
