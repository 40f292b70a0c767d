import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { ApiError } from '../api/api-error';
import { configureApi } from '../api/api-client';
import * as sessionApi from '../api/session-api';
import type { SessionUser } from './permissions';
import { SessionContext, type SessionContextValue, type SessionStatus } from './session-context';
import { getStoredSessionId, storeSessionId } from './session-storage';

const EXPIRED_NOTICE = 'Your session has ended. Sign in again to continue where you were.';
const SIGNED_OUT_ELSEWHERE = 'You signed out in another tab.';
const NO_COOKIE =
  'Your browser did not keep the sign-in. Allow cookies for this site, then sign in again.';

/**
 * Tabs of the app tell each other when they sign in or out: they share one session (the
 * cookie), so a sign-out in one ends every tab's, and a sign-in in one lets the others in.
 */
type TabMessage = { type: 'signed-in' } | { type: 'signed-out' };
const TAB_CHANNEL = 'portfolio-manager.session';

/** The user the server says this browser is signed in as (by its cookie), or null. */
async function currentUser(): Promise<SessionUser | null> {
  try {
    return (await sessionApi.getCurrentSession()).user;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}

/** Adopts a session id handed over by the desktop shell; null when the server refuses it. */
async function userFor(sessionId: string): Promise<SessionUser | null> {
  storeSessionId(sessionId);
  const user = await currentUser();
  if (!user) storeSessionId(null);
  return user;
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
  const userRef = useRef(user);
  useEffect(() => {
    statusRef.current = status;
    userRef.current = user;
  }, [status, user]);
  const channel = useMemo(
    () => (typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel(TAB_CHANNEL)),
    [],
  );
  useEffect(() => () => channel?.close(), [channel]);
  const tell = useCallback((message: TabMessage) => channel?.postMessage(message), [channel]);

  const adopt = useCallback((next: SessionUser) => {
    setUser(next);
    setNotice(null);
    setStatus('signed-in');
  }, []);

  /** The desktop shell's session, else the browser's cookie (another tab's sign-in counts). */
  const resume = useCallback(async (): Promise<SessionUser | null> => {
    const fromDesktop = await desktopSessionId();
    if (fromDesktop) {
      const found = await userFor(fromDesktop);
      if (found) return found;
    }
    return currentUser();
  }, []);

  const signedOut = useCallback(
    (message: string) => {
      storeSessionId(null);
      queryClient.clear();
      setUser(null);
      setNotice(message);
      setStatus('signed-out');
    },
    [queryClient],
  );

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

  // What another tab did to the shared session.
  useEffect(() => {
    if (!channel) return;
    const onMessage = (event: MessageEvent<TabMessage>) => {
      if (event.data?.type === 'signed-out' && statusRef.current === 'signed-in')
        signedOut(SIGNED_OUT_ELSEWHERE);
      if (event.data?.type === 'signed-in' && !getStoredSessionId()) {
        // The cookie now names the new session, perhaps of another account.
        void currentUser().then((found) => {
          if (!found) return;
          const sameUser = userRef.current?.username === found.username;
          adopt(found);
          if (sameUser) void queryClient.invalidateQueries();
          else queryClient.clear();
        });
      }
    };
    channel.addEventListener('message', onMessage);
    return () => channel.removeEventListener('message', onMessage);
  }, [adopt, channel, queryClient, signedOut]);

  const signIn = useCallback(
    async (username: string, password: string) => {
      // The answer sets the session cookie; the id in its body is not kept.
      await sessionApi.signIn({ username, password });
      const found = await currentUser();
      if (!found) throw new Error(NO_COOKIE);
      const sameUser = user?.username === found.username;
      adopt(found);
      tell({ type: 'signed-in' });
      // After an expiry the page the user was on is still mounted: refresh its data. A
      // different account must not see the previous one's cached data.
      if (sameUser) await queryClient.invalidateQueries();
      else queryClient.clear();
    },
    [adopt, queryClient, tell, user],
  );

  const signOut = useCallback(async () => {
    try {
      await sessionApi.signOut();
    } catch {
      // Signing out locally matters more than telling a server that may be gone.
    }
    tell({ type: 'signed-out' });
    signedOut('You have signed out.');
  }, [signedOut, tell]);

  const value = useMemo<SessionContextValue>(
    () => ({ status, user, notice, signIn, signOut }),
    [status, user, notice, signIn, signOut],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}
