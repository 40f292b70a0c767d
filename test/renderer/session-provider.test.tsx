// @vitest-environment happy-dom
import { cleanup, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import type { DesktopApi } from '../../shared/desktop-bridge';
import { SessionProvider } from '../../renderer/src/session/SessionProvider';
import { useSession } from '../../renderer/src/session/use-session';
import { errorBody, renderWithApp, useFakeApi } from './support/render';

/**
 * Where the renderer's session comes from (DESIGN §2): a browser asks the server who it is by
 * its cookie and keeps no session id; the desktop window takes its session from the shell.
 */

afterEach(() => {
  cleanup();
  delete (window as { desktop?: DesktopApi }).desktop;
  sessionStorage.clear();
  localStorage.clear();
});

const ME = {
  createdDate: 1,
  expiredDate: 2,
  idleExpiresAt: 2,
  user: { username: 'curator', role: 'editor', allowEdit: ['Ceramics'] },
};

function Probe() {
  const { status, user, signIn, signOut } = useSession();
  return (
    <div>
      <p>
        {status}
        {user && ` as ${user.username}`}
      </p>
      <button type="button" onClick={() => void signIn('curator', 'curator-password')}>
        in
      </button>
      <button type="button" onClick={() => void signOut()}>
        out
      </button>
    </div>
  );
}

describe('SessionProvider in a browser', () => {
  it('is signed in on start when the cookie names a session, sending no session id', async () => {
    const api = useFakeApi().on('GET /api/v1/appauth', { status: 200, body: ME });
    renderWithApp(<SessionProvider>{<Probe />}</SessionProvider>);
    expect(await screen.findByText('signed-in as curator')).toBeTruthy();
    const [asked] = api.sent('GET /api/v1/appauth');
    expect(asked).toMatchObject({ authorization: null, client: 'web' });
  });

  it('shows sign-in when the cookie names none', async () => {
    useFakeApi().on('GET /api/v1/appauth', {
      status: 401,
      body: errorBody('UNAUTHORIZED', 'A valid session is required.'),
    });
    renderWithApp(<SessionProvider>{<Probe />}</SessionProvider>);
    expect(await screen.findByText('signed-out')).toBeTruthy();
  });

  it('keeps nothing of the session in web storage after signing in, and says web on changes', async () => {
    let signedIn = false;
    const api = useFakeApi()
      .on('GET /api/v1/appauth', () =>
        signedIn
          ? { status: 200, body: ME }
          : { status: 401, body: errorBody('UNAUTHORIZED', 'A valid session is required.') },
      )
      .on('POST /api/v1/appauth', () => {
        signedIn = true;
        return { status: 200, body: { sessionId: 'a'.repeat(43), createdDate: 1, expiredDate: 2 } };
      })
      .on('DELETE /api/v1/appauth', { status: 204 });
    renderWithApp(<SessionProvider>{<Probe />}</SessionProvider>);
    await screen.findByText('signed-out');
    await userEvent.click(screen.getByRole('button', { name: 'in' }));
    expect(await screen.findByText('signed-in as curator')).toBeTruthy();
    expect(Object.keys(sessionStorage)).toEqual([]);
    expect(Object.keys(localStorage)).toEqual([]);
    // The id in the answer is not sent back: the cookie carries the session.
    expect(api.sent('GET /api/v1/appauth').every((request) => request.authorization === null)).toBe(
      true,
    );
    await userEvent.click(screen.getByRole('button', { name: 'out' }));
    expect(await screen.findByText('signed-out')).toBeTruthy();
    expect(api.sent('DELETE /api/v1/appauth')[0]).toMatchObject({ client: 'web' });
  });
});

describe('SessionProvider in the desktop window', () => {
  it('takes the shell’s session and sends it as the Authorization header', async () => {
    const sessionId = 'd'.repeat(43);
    (window as { desktop?: Partial<DesktopApi> }).desktop = {
      getSession: async () => ({ sessionId, createdDate: 1, expiredDate: 2, username: 'owner' }),
    };
    const api = useFakeApi().on('GET /api/v1/appauth', { status: 200, body: ME });
    renderWithApp(<SessionProvider>{<Probe />}</SessionProvider>);
    expect(await screen.findByText('signed-in as curator')).toBeTruthy();
    expect(api.sent('GET /api/v1/appauth')[0]).toMatchObject({ authorization: sessionId });
  });
});
