import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readdir, rm, stat } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type SafeStorageLike,
  desktopSecretBox,
  keychainAvailable,
} from '../../electron/main/token-secret-box';
import { SyncError } from '../../server/sync/sync-error';
import { makeTempDir } from '../helpers/test-server';

/** A keychain with a real cipher and a key only it holds, switchable on and off like the OS's. */
function keychain(backend = 'gnome_libsecret') {
  const key = randomBytes(32);
  const state = { available: true, encrypted: 0 };
  const storage: SafeStorageLike = {
    isEncryptionAvailable: () => state.available,
    getSelectedStorageBackend: () => backend,
    encryptString(plain) {
      state.encrypted++;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    decryptString(encrypted) {
      const decipher = createDecipheriv('aes-256-gcm', key, encrypted.subarray(0, 12));
      decipher.setAuthTag(encrypted.subarray(12, 28));
      return Buffer.concat([decipher.update(encrypted.subarray(28)), decipher.final()]).toString();
    },
  };
  return { storage, state };
}

const TOKEN = randomBytes(32).toString('base64url');

describe('the desktop secret box for the hub device token', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await makeTempDir('portfolio-secret-box-');
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('seals with the OS keychain where there is one, and keeps no key file', async () => {
    const { storage, state } = keychain();
    const box = desktopSecretBox(storage, dataDir);
    const sealed = await box.seal(TOKEN);
    expect(sealed.startsWith('keychain1.')).toBe(true);
    expect(sealed).not.toContain(TOKEN);
    expect(state.encrypted).toBe(1);
    expect(await box.open(sealed)).toBe(TOKEN);
    expect(await readdir(dataDir)).toEqual([]);
  });

  it.each([
    ['no keychain', false, 'gnome_libsecret'],
    ['a hard-coded key (basic_text)', true, 'basic_text'],
  ])('falls back to the 0600 key file with %s', async (_case, available, backend) => {
    const { storage, state } = keychain(backend);
    state.available = available;
    expect(keychainAvailable(storage)).toBe(false);
    const box = desktopSecretBox(storage, dataDir);
    const sealed = await box.seal(TOKEN);
    expect(sealed.startsWith('keychain1.')).toBe(false);
    expect(sealed).not.toContain(TOKEN);
    expect(state.encrypted).toBe(0);
    expect((await stat(`${dataDir}/sync.key`)).mode & 0o777).toBe(0o600);
    expect(await desktopSecretBox(storage, dataDir).open(sealed)).toBe(TOKEN);
  });

  it('opens a token sealed by the key file after the keychain came', async () => {
    const { storage, state } = keychain();
    state.available = false;
    const sealed = await desktopSecretBox(storage, dataDir).seal(TOKEN);
    state.available = true;
    expect(await desktopSecretBox(storage, dataDir).open(sealed)).toBe(TOKEN);
  });

  it('asks for a new sign-in when the keychain that sealed the token is gone', async () => {
    const { storage, state } = keychain();
    const sealed = await desktopSecretBox(storage, dataDir).seal(TOKEN);
    state.available = false;
    const opening = desktopSecretBox(storage, dataDir).open(sealed);
    await expect(opening).rejects.toBeInstanceOf(SyncError);
    await expect(opening).rejects.toMatchObject({ code: 'SYNC_DEVICE_REVOKED' });
  });
});
