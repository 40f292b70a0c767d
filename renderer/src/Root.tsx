import { SessionProvider } from './session/SessionProvider';
import { AppShell } from './components/AppShell';

export function Root() {
  return (
    <SessionProvider>
      <AppShell />
    </SessionProvider>
  );
}
