import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLIENT_TYPES_PATH, clientTypes, openApiDocument } from './openapi-document';

/**
 * `tsx scripts/openapi.ts lint`: lints the server's OpenAPI document with Redocly (redocly.yaml).
 * `tsx scripts/openapi.ts generate`: writes the renderer's client types from it.
 * `tsx scripts/openapi.ts write <file>`: writes the document itself.
 */
async function main(command: string | undefined, argument: string | undefined): Promise<number> {
  const document = await openApiDocument();
  switch (command) {
    case 'lint':
      return lint(document);
    case 'generate':
      await writeFile(CLIENT_TYPES_PATH, await clientTypes(document));
      console.log(`wrote ${CLIENT_TYPES_PATH}`);
      return 0;
    case 'write':
      if (!argument) break;
      await writeFile(argument, JSON.stringify(document, null, 2) + '\n');
      return 0;
  }
  console.error('usage: tsx scripts/openapi.ts lint | generate | write <file>');
  return 2;
}

async function lint(document: unknown): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'portfolio-openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(document, null, 2));
    const result = spawnSync(
      process.execPath,
      ['node_modules/@redocly/cli/bin/cli.js', 'lint', file, '--config', 'redocly.yaml'],
      {
        stdio: 'inherit',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    );
    return result.status ?? 1;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main(process.argv[2], process.argv[3]);
