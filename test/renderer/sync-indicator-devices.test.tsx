// @vitest-environment happy-dom
import { cleanup, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import type { SyncStatus } from '../../renderer/src/api/sync-api';
import { SyncIndicator, SyncIndicatorView } from '../../renderer/src/sync/SyncIndicator';
import { UserDevices } from '../../renderer/src/sync/UserDevices';
import { errorBody, renderWithApp, useFakeApi } from './support/render';

afterEach(cleanup);

const idle: SyncStatus = {
  state: 'idle',
  lastSuccess: Date.now() - 2 * 60_000,
  lastError: null,
  pending: { changes: 0, blobs: 0, bytes: 0 },
  progress: { done: 0, total: 0, bytes: 0 },
  conflicts: 0,
};

describe('the app bar sync indicator', () => {
  it.each([
    [idle, /^Sync: Up to date, last synced 2 minutes ago\. Team server settings$/],
    [{ ...idle, state: 'running' } as SyncStatus, /^Sync: Syncing…/],
    [
      { ...idle, state: 'error', conflicts: 1 } as SyncStatus,
      /^Sync: Sync failed.*1 conflict to resolve/,
    ],
    [{ ...idle, state: 'offline' } as SyncStatus, /^Sync: Hub offline/],
    ['unset' as const, /^Sync: Not set up\. Team server settings$/],
  ])('names its state and links to the Team server settings', (status, name) => {
    renderWithApp(<SyncIndicatorView status={status} />);
    const link = screen.getByRole('link', { name });
    expect(link.getAttribute('href')).toBe('/settings#team-server');
  });

  it('reads the configuration and the status from the API', async () => {
    const api = useFakeApi()
      .on('GET /api/v1/sync/config', {
        status: 200,
        body: {
          configured: true,
          hubUrl: 'http://hub',
          username: 'a',
          deviceId: 'd',
          replicaId: 'r',
        },
      })
      .on('GET /api/v1/sync/status', { status: 200, body: { ...idle, state: 'offline' } });
    renderWithApp(<SyncIndicator />);
    expect(await screen.findByRole('link', { name: /^Sync: Hub offline/ })).toBeTruthy();
    expect(api.sent('GET /api/v1/sync/status')).toHaveLength(1);
  });

  it('says "not set up" without asking for a status nobody keeps', async () => {
    const api = useFakeApi().on('GET /api/v1/sync/config', {
      status: 200,
      body: { configured: false, available: true },
    });
    renderWithApp(<SyncIndicator />);
    expect(await screen.findByRole('link', { name: /^Sync: Not set up/ })).toBeTruthy();
    expect(api.sent('GET /api/v1/sync/status')).toEqual([]);
  });
});

describe("a user's devices in the Users screen", () => {
  const device = {
    deviceId: 'dev-1',
    name: 'Studio laptop',
    replicaId: 'r-1',
    username: 'curator',
    createdDate: Date.UTC(2026, 10, 1),
    lastSeen: Date.now() - 3 * 3_600_000,
  };

  it('lists them and signs one out after a confirmation', async () => {
    let devices = [device];
    const api = useFakeApi()
      .on('GET /api/v1/devices?username=curator', () => ({ status: 200, body: { devices } }))
      .on('DELETE /api/v1/devices/dev-1', () => {
        devices = [];
        return { status: 204 };
      });
    renderWithApp(<UserDevices username="curator" />);
    const user = userEvent.setup();

    expect(await screen.findByText('Studio laptop')).toBeTruthy();
    expect(screen.getByText(/last seen 3 hours ago/)).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Sign out device Studio laptop' }));
    const dialog = await screen.findByRole('dialog', { name: 'Sign out Studio laptop?' });
    await user.click(within(dialog).getByRole('button', { name: 'Sign out device' }));

    expect(await screen.findByText('No device syncs as curator.')).toBeTruthy();
    expect(api.sent('DELETE /api/v1/devices/dev-1')).toHaveLength(1);
  });

  it('says when the devices cannot be read', async () => {
    useFakeApi().on('GET /api/v1/devices?username=curator', {
      status: 403,
      body: errorBody('FORBIDDEN', 'Your role does not allow this action.'),
    });
    renderWithApp(<UserDevices username="curator" />);
    expect((await screen.findByRole('alert')).textContent).toMatch(/could not be loaded/);
  });
});
