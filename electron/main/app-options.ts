import type { AppOptions } from '../../server/app';
import type { SecretBox } from '../../server/sync/secret-box';
import { unknowablePassword } from '../../server/shell-facade';
import { OWNER_USERNAME } from './owner-account';

/** The embedded server's buildApp options: the same factory as headless, set up for one owner. */
export function desktopAppOptions(options: {
  dataDir: string;
  rendererDir: string | null;
  logLevel: string;
  /** Seals the hub device token (the OS keychain where there is one). */
  secretBox?: SecretBox;
}): AppOptions {
  return {
    dataDir: options.dataDir,
    rendererDir: options.rendererDir,
    logger: { level: options.logLevel },
    // Loopback until the owner shares on the LAN (ServerHost keeps this in step).
    loopbackOnly: true,
    // First run on an empty folder: the owner is the first admin, so no "admin" account with a
    // password nobody saw is made. ensureOwner covers folders that already have users.
    bootstrapAdmin: { username: OWNER_USERNAME, password: unknowablePassword() },
    sync: options.secretBox ? { secretBox: options.secretBox } : undefined,
  };
}
