import { useContext } from 'react';
import { SessionContext, type SessionContextValue } from './session-context';

export function useSession(): SessionContextValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession must be used inside <SessionProvider>.');
  return value;
}

/** The signed-in user; screens behind the sign-in gate may rely on it. */
export function useUser() {
  const { user } = useSession();
  if (!user) throw new Error('useUser needs a signed-in session.');
  return user;
}
