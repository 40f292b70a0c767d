import type { ShellFacade } from '../../server/shell-facade';
import type { DesktopSession } from '../../shared/desktop-bridge';

/** The local owner's username: the person at this computer, an admin of their own data. */
export const OWNER_USERNAME = 'owner';

/** Makes sure the owner account exists and is an admin of everything; returns its name. */
export async function ensureOwner(
  shell: Pick<ShellFacade, 'ensureOwner'>,
  username = OWNER_USERNAME,
): Promise<string> {
  await shell.ensureOwner(username);
  return username;
}

/**
 * Hands the window a session of the owner without a password: the server's facade reuses a
 * valid session and opens a new one after it ends, so the renderer recovers from a 401 by
 * asking again.
 */
export class OwnerSessions {
  constructor(
    private readonly shell: Pick<ShellFacade, 'ownerSession'>,
    readonly username: string,
  ) {}

  async get(): Promise<DesktopSession> {
    return { ...(await this.shell.ownerSession(this.username)), username: this.username };
  }
}
