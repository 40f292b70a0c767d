import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SecretBox } from '../config';

/**
 * Seals the hub device token before it is stored. The desktop shell passes one backed by
 * Electron's safeStorage (the OS keychain); headless, `fileKeySecretBox` keeps a random key in
 * `<dataDir>/sync.key`, readable by the owner only (0600): the token is then as safe as that file.
 */
export type { SecretBox };

const KEY_FILE = 'sync.key';

export function fileKeySecretBox(dataDir: string): SecretBox {
  const path = join(dataDir, KEY_FILE);
  let key: Promise<Buffer> | undefined;
  const keyOf = () =>
    (key ??= readFile(path).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
      const made = randomBytes(32);
      await writeFile(path, made, { mode: 0o600, flag: 'wx' }).catch(
        async (e: NodeJS.ErrnoException) => {
          if (e.code !== 'EEXIST') throw e;
        },
      );
      await chmod(path, 0o600);
      return readFile(path);
    }));
  return {
    async seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', await keyOf(), iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv, cipher.getAuthTag(), body]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },
    async open(sealed) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || body === undefined)
        throw new Error('not a sealed token');
      const decipher = createDecipheriv('aes-256-gcm', await keyOf(), Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(body, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    },
  };
}
