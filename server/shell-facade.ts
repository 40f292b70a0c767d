import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Session } from '../shared';

/**
 * Everything a shell that embeds the server (the Electron main process) may do besides
 * HTTP. It is the whole surface such a shell sees: repositories, sessions and the resolved
 * config stay the server's own.
 */
export interface ShellFacade {
  /**
   * Makes sure `username` exists as an admin of every category. A new account gets a password
   * nobody knows; an existing one (say, made by a headless server's admin) is promoted, since
   * whoever runs the app on the folder controls its files anyway.
   */
  ensureOwner(username: string): Promise<void>;
  /**
   * A session of `username` opened without a password. The same session is handed out while it
   * is valid; once it ends (lifetime, idle time, a password change) the next call opens a new
   * one, and concurrent callers share that one.
   */
  ownerSession(username: string): Promise<Session>;
  /** On while listening on loopback only: requests must then name a loopback Host. */
  setLoopbackOnly(loopbackOnly: boolean): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    shell: ShellFacade;
  }
}

/** A password nobody knows: the owner sets a real one only to sign in from elsewhere. */
export function unknowablePassword(): string {
  return randomBytes(32).toString('base64url');
}

function createShellFacade(app: FastifyInstance): ShellFacade {
  const current = new Map<string, Session>();
  const opening = new Map<string, Promise<Session>>();

  const isValid = async (username: string, session: Session | undefined): Promise<boolean> => {
    if (!session) return false;
    try {
      return (await app.sessions.authenticate(session.sessionId)).user.username === username;
    } catch {
      return false;
    }
  };

  return {
    async ensureOwner(username) {
      const existing = await app.userRepository.get(username);
      if (!existing) {
        await app.userService.create({
          username,
          password: unknowablePassword(),
          role: 'admin',
          allowEdit: ['*'],
        });
      } else if (existing.role !== 'admin' || !existing.allowEdit.includes('*')) {
        await app.userService.update(username, { role: 'admin', allowEdit: ['*'] });
      }
    },

    async ownerSession(username) {
      const session = current.get(username);
      if (session && (await isValid(username, session))) return session;
      let pending = opening.get(username);
      if (!pending) {
        pending = app.sessions
          .open(username)
          .then((opened) => {
            current.set(username, opened);
            return opened;
          })
          .finally(() => opening.delete(username));
        opening.set(username, pending);
      }
      return pending;
    },

    setLoopbackOnly(loopbackOnly) {
      app.config.loopbackOnly = loopbackOnly;
    },
  };
}

export default fp(
  async function shellFacade(app: FastifyInstance) {
    app.decorate('shell', createShellFacade(app));
  },
  { name: 'shell-facade', dependencies: ['storage', 'auth'] },
);
