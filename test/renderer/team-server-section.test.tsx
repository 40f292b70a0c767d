// @vitest-environment happy-dom
import { cleanup, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import type { SyncStatus } from '../../renderer/src/api/sync-api';
import { SyncStatusView, TeamServerSection } from '../../renderer/src/sync/TeamServerSection';
import { errorBody, renderWithApp, useFakeApi } from './support/render';

afterEach(cleanup);

const CONFIG = {
  configured: true,
  hubUrl: 'http://hub.example:8080',
  username: 'curator',
  deviceId: 'd-1',
  replicaId: 'r-1',
};

const MINUTE = 60_000;

function status(overrides: Partial<SyncStatus> = {}): SyncStatus {
  return {
    state: 'idle',
    lastSuccess: Date.now() - 5 * MINUTE,
    lastError: null,
    pending: { changes: 0, blobs: 0, bytes: 0 },
    progress: { done: 0, total: 0, bytes: 0 },
    conflicts: 0,
    ...overrides,
  };
}

async function fillSignIn(password: string) {
  const user = userEvent.setup();
  await user.type(await screen.findByLabelText(/^Hub address/), CONFIG.hubUrl);
  await user.type(screen.getByLabelText(/^Username on the hub/), CONFIG.username);
  await user.type(screen.getByLabelText(/^Password on the hub/), password);
  await user.click(screen.getByRole('button', { name: 'Sign in and sync' }));
  return user;
}

describe('Settings → Team server', () => {
  it('signs in once, sends the password only then, and clears it', async () => {
    const api = useFakeApi()
      .on('GET /api/v1/sync/config', { status: 200, body: { configured: false, available: true } })
      .on('PUT /api/v1/sync/config', { status: 200, body: CONFIG })
      .on('GET /api/v1/sync/status', { status: 200, body: status() });
    renderWithApp(<TeamServerSection />);

    await fillSignIn('s3cret-password');

    expect(await screen.findByText('Up to date')).toBeTruthy();
    expect(api.sent('PUT /api/v1/sync/config').map((request) => request.body)).toEqual([
      { hubUrl: CONFIG.hubUrl, username: 'curator', password: 's3cret-password' },
    ]);
    expect(screen.getByText(CONFIG.hubUrl)).toBeTruthy();
    expect(screen.getByText('5 minutes ago')).toBeTruthy();
    expect(screen.queryByLabelText(/^Password on the hub/)).toBeNull();
  });

  it.each([
    [
      401,
      'HUB_SIGN_IN_FAILED',
      'wrong username or password on the hub',
      /Wrong username or password on the hub/,
    ],
    [400, 'HUB_UNREACHABLE', 'connect ECONNREFUSED', /The hub cannot be reached/],
    [400, 'HUB_NOT_PORTFOLIO', 'not a Portfolio Manager server', /not a Portfolio Manager server/],
    [
      400,
      'HUB_TOO_OLD',
      'hub too old: it speaks sync protocol 1, this app needs 2',
      /too old for this app.*protocol 1, this app needs 2/,
    ],
  ])('says %s %s in words and empties the password field', async (code, name, message, words) => {
    useFakeApi()
      .on('GET /api/v1/sync/config', { status: 200, body: { configured: false, available: true } })
      .on('PUT /api/v1/sync/config', { status: code, body: errorBody(name, message) });
    renderWithApp(<TeamServerSection />);

    await fillSignIn('wrong-password');

    expect((await screen.findByRole('alert')).textContent).toMatch(words);
    expect((screen.getByLabelText(/^Password on the hub/) as HTMLInputElement).value).toBe('');
    expect((screen.getByLabelText(/^Hub address/) as HTMLInputElement).value).toBe(CONFIG.hubUrl);
  });

  it('refuses an address that is not http(s) before asking the server', async () => {
    const api = useFakeApi().on('GET /api/v1/sync/config', {
      status: 200,
      body: { configured: false, available: true },
    });
    renderWithApp(<TeamServerSection />);
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText(/^Hub address/), 'hub.example');
    await user.click(screen.getByRole('button', { name: 'Sign in and sync' }));
    expect(await screen.findByText(/starting with http:\/\/ or https:\/\//)).toBeTruthy();
    expect(api.sent('PUT /api/v1/sync/config')).toEqual([]);
  });

  it('runs a round with Sync now and forgets the hub after a confirmation', async () => {
    const api = useFakeApi()
      .on('GET /api/v1/sync/config', { status: 200, body: CONFIG })
      .on('GET /api/v1/sync/status', {
        status: 200,
        body: status({ pending: { changes: 3, blobs: 1, bytes: 2 * 1024 * 1024 } }),
      })
      .on('POST /api/v1/sync/run', {
        status: 200,
        body: {
          pulled: 2,
          pushed: 3,
          conflicts: 1,
          blobsUp: 1,
          blobsDown: 0,
          bytesUp: 2097152,
          bytesDown: 0,
          durationMs: 40,
        },
      })
      .on('DELETE /api/v1/sync/config', { status: 204 });
    renderWithApp(<TeamServerSection />);
    const user = userEvent.setup();

    expect(
      await screen.findByText('3 changes and 2.0 MB of files waiting to be sent.'),
    ).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Sync now' }));
    expect(await screen.findByText('Synced: 2 received, 3 sent, 1 to resolve.')).toBeTruthy();
    expect(api.sent('POST /api/v1/sync/run')).toHaveLength(1);

    await user.click(screen.getByRole('button', { name: 'Forget this hub' }));
    const dialog = await screen.findByRole('dialog', { name: 'Forget this hub?' });
    await user.click(within(dialog).getByRole('button', { name: 'Forget hub' }));
    expect(await screen.findByLabelText(/^Hub address/)).toBeTruthy();
    expect(api.sent('DELETE /api/v1/sync/config')).toHaveLength(1);
  });

  it('offers to sign in again when the hub signed this device out', async () => {
    useFakeApi()
      .on('GET /api/v1/sync/config', { status: 200, body: CONFIG })
      .on('GET /api/v1/sync/status', {
        status: 200,
        body: status({
          state: 'error',
          lastError: {
            code: 'SYNC_DEVICE_REVOKED',
            message: 'this device was signed out of the hub; sign in again',
            time: Date.now(),
          },
        }),
      });
    renderWithApp(<TeamServerSection />);
    expect(await screen.findByText(/This device was signed out of the hub/)).toBeTruthy();
    expect((screen.getByLabelText(/^Hub address/) as HTMLInputElement).value).toBe(CONFIG.hubUrl);
    expect((screen.getByRole('button', { name: 'Sync now' }) as HTMLButtonElement).disabled).toBe(
      true,
    );
  });
});

describe('the sync status in words', () => {
  const now = Date.UTC(2026, 10, 22, 12, 0, 0);

  it('shows a round in progress as a bar of records with the bytes moved', () => {
    renderWithApp(
      <SyncStatusView
        now={now}
        status={status({
          state: 'running',
          progress: { done: 40, total: 160, bytes: 5 * 1024 * 1024 },
        })}
      />,
    );
    const bar = screen.getByRole('progressbar') as HTMLProgressElement;
    expect(bar.value).toBe(40);
    expect(bar.max).toBe(160);
    expect(screen.getByText('40 of 160 records · 5.0 MB')).toBeTruthy();
    expect(screen.getByText('Syncing…')).toBeTruthy();
  });

  it('names a full disk and an unreachable hub, and hides an error a later success ended', () => {
    const { rerender } = renderWithApp(
      <SyncStatusView
        now={now}
        status={status({
          state: 'error',
          lastSuccess: now - 60 * MINUTE,
          lastError: {
            code: 'STORAGE_FAILURE',
            message: 'ENOSPC: no space left on device',
            time: now - MINUTE,
          },
        })}
      />,
    );
    expect(screen.getByRole('alert').textContent).toMatch(/The disk is full/);
    expect(screen.getByText('1 hour ago')).toBeTruthy();

    rerender(
      <SyncStatusView
        now={now}
        status={status({
          state: 'offline',
          lastSuccess: null,
          lastError: { code: 'HUB_UNREACHABLE', message: 'connect ECONNREFUSED', time: now },
        })}
      />,
    );
    expect(screen.getByRole('alert').textContent).toMatch(/The hub cannot be reached/);
    expect(screen.getByText('Never')).toBeTruthy();

    rerender(
      <SyncStatusView
        now={now}
        status={status({
          lastSuccess: now,
          lastError: {
            code: 'HUB_UNREACHABLE',
            message: 'connect ECONNREFUSED',
            time: now - MINUTE,
          },
        })}
      />,
    );
    expect(screen.queryByRole('alert')).toBeNull();
  });
});
