import { createContext } from 'react';
import type { SessionUser } from './permissions';

export type SessionStatus = 'loading' | 'signed-in' | 'signed-out' | 'expired';

export interface SessionContextValue {
  status: SessionStatus;
  user: SessionUser | null;
  /** Why the sign-in screen is showing, e.g. "Your session has expired". */
  notice: string | null;
  signIn(username: string, password: string): Promise<void>;
  signOut(): Promise<void>;
}

export const SessionContext = createContext<SessionContextValue | null>(null);
