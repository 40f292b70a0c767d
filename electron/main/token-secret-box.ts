import { fileKeySecretBox, type SecretBox } from '../../server/sync/secret-box';
import { SyncError } from '../../server/sync/sync-error';

/** The part of Electron's `safeStorage` the box uses: the seam the Node tests use. */
export interface SafeStorageLike {
  isEncryptionAvailable(): boolean;
  encryptString(plain: string): Buffer;
  decryptString(encrypted: Buffer): string;
  /** Linux only: which keyring holds the key. */
  getSelectedStorageBackend?(): string;
}

/** Marks a token sealed by the OS keychain; anything else was sealed by the key file. */
const KEYCHAIN_PREFIX = 'keychain1.';

/**
 * Whether the OS really protects what safeStorage encrypts. On Linux without a keyring it
 * falls back to `basic_text`, a key hard-coded in Chromium: no better than our 0600 key file.
 */
export function keychainAvailable(safeStorage: SafeStorageLike): boolean {
  if (!safeStorage.isEncryptionAvailable()) return false;
  return safeStorage.getSelectedStorageBackend?.() !== 'basic_text';
}

/**
 * Seals the hub device token with the OS keychain (Electron's safeStorage: Keychain on macOS,
 * DPAPI on Windows, libsecret/kwallet on Linux) where it is available, else as a headless server
 * does, with the key file in the data directory. Opening follows how a token was sealed, so one
 * sealed before the keychain came (or went) keeps working when it can.
 */
export function desktopSecretBox(safeStorage: SafeStorageLike, dataDir: string): SecretBox {
  const fallback = fileKeySecretBox(dataDir);
  return {
    async seal(plain) {
      if (!keychainAvailable(safeStorage)) return fallback.seal(plain);
      return KEYCHAIN_PREFIX + safeStorage.encryptString(plain).toString('base64');
    },
    async open(sealed) {
      if (!sealed.startsWith(KEYCHAIN_PREFIX)) return fallback.open(sealed);
      if (!safeStorage.isEncryptionAvailable())
        // The remedy is the same as for a revoked device: sign in to the hub again.
        throw new SyncError(
          'SYNC_DEVICE_REVOKED',
          "this computer's keychain cannot open the stored hub token now; sign in to the hub again",
        );
      return safeStorage.decryptString(Buffer.from(sealed.slice(KEYCHAIN_PREFIX.length), 'base64'));
    },
  };
}
