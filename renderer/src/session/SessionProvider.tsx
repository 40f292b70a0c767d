import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { ApiError } from '../api/api-error';
import { configureApi } from '../api/api-client';
import * as sessionApi from '../api/session-api';
import type { SessionUser } from './permissions';
import { SessionContext, type SessionContextValue, type SessionStatus } from './session-context';
import { getStoredSessionId, storeSessionId } from './session-storage';

const EXPIRED_NOTICE = 'Your session has ended. Sign in again to continue where you were.';

async function userFor(sessionId: string): Promise<SessionUser | null> {
  storeSessionId(sessionId);
  try {
    return (await sessionApi.getCurrentSession()).user;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      storeSessionId(null);
      return null;
    }
    throw error;
  }
}

/** The desktop shell signs its own window in; a browser has no shell and gets null. */
async function desktopSessionId(): Promise<string | null> {
  try {
    return (await window.desktop?.getSession())?.sessionId ?? null;
  } catch {
    return null;
  }
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<SessionStatus>('loading');
  const [user, setUser] = useState<SessionUser | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const statusRef = useRef(status);
  useEffect(() => {
    statusRef.current = status;
  }, [status]);

  const adopt = useCallback((next: SessionUser) => {
    setUser(next);
    setNotice(null);
    setStatus('signed-in');
  }, []);

  const resume = useCallback(async (): Promise<SessionUser | null> => {
    const stored = getStoredSessionId();
    if (stored) {
      const found = await userFor(stored);
      if (found) return found;
    }
    const fromDesktop = await desktopSessionId();
    return fromDesktop ? userFor(fromDesktop) : null;
  }, []);

  useEffect(() => {
    configureApi({
      getSessionId: getStoredSessionId,
      onUnauthorized: () => {
        if (statusRef.current !== 'signed-in') return;
        storeSessionId(null);
        statusRef.current = 'expired';
        setStatus('expired');
        setNotice(EXPIRED_NOTICE);
        // The desktop shell can hand out a fresh session without asking the user.
        void desktopSessionId().then(async (id) => {
          const found = id ? await userFor(id) : null;
          if (found) {
            adopt(found);
            void queryClient.invalidateQueries();
          }
        });
      },
    });
  }, [adopt, queryClient]);

  useEffect(() => {
    let cancelled = false;
    resume()
      .then((found) => {
        if (cancelled) return;
        if (found) adopt(found);
        else setStatus('signed-out');
      })
      .catch(() => {
        if (cancelled) return;
        setNotice('The server cannot be reached right now. Try signing in when it is back.');
        setStatus('signed-out');
      });
    return () => {
      cancelled = true;
    };
  }, [adopt, resume]);

  const signIn = useCallback(
    async (username: string, password: string) => {
      const session = await sessionApi.signIn({ username, password });
      const found = await userFor(session.sessionId);
      if (!found) throw new Error('The new session was not accepted; try again.');
      const sameUser = user?.username === found.username;
      adopt(found);
      // After an expiry the page the user was on is still mounted: refresh its data. A
      // different account must not see the previous one's cached data.
      if (sameUser) await queryClient.invalidateQueries();
      else queryClient.clear();
    },
    [adopt, queryClient, user],
  );

  const signOut = useCallback(async () => {
    try {
      await sessionApi.signOut();
    } catch {
      // Signing out locally matters more than telling a server that may be gone.
    }
    storeSessionId(null);
    queryClient.clear();
    setUser(null);
    setNotice('You have signed out.');
    setStatus('signed-out');
  }, [queryClient]);

  const value = useMemo<SessionContextValue>(
    () => ({ status, user, notice, signIn, signOut }),
    [status, user, notice, signIn, signOut],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}
