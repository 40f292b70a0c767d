import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { queryKeys } from '../api/query-keys';
import { type Device, listDevices, signOutDevice } from '../api/sync-api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { useToast } from '../components/use-toast';
import { formatDate, formatRelativeTime } from '../lib/format';
import { describeSyncError } from './sync-words';

/** The devices (desktop libraries) a user signed in to this hub with, each revocable. */
export function UserDevices({ username }: { username: string }) {
  const devices = useQuery({
    queryKey: queryKeys.devices(username),
    queryFn: async ({ signal }) => (await listDevices(username, signal)).devices,
  });
  const headingId = `devices-${username}`;

  return (
    <div className="user-devices" aria-labelledby={headingId} role="group">
      <h3 id={headingId} className="user-devices-heading">
        Synced devices
      </h3>
      {devices.isPending ? (
        <p className="muted" aria-busy="true">
          Loading…
        </p>
      ) : devices.isError ? (
        <p className="form-error" role="alert">
          The devices could not be loaded. {describeSyncError(devices.error)}
        </p>
      ) : devices.data.length === 0 ? (
        <p className="muted">No device syncs as {username}.</p>
      ) : (
        <ul className="device-list">
          {devices.data.map((device) => (
            <DeviceRow key={device.deviceId} device={device} />
          ))}
        </ul>
      )}
    </div>
  );
}

function DeviceRow({ device }: { device: Device }) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const [confirming, setConfirming] = useState(false);
  const signOut = useMutation({
    mutationFn: () => signOutDevice(device.deviceId),
    onSuccess: async () => {
      setConfirming(false);
      toast.success(`${device.name} was signed out. It stops syncing at once.`);
      await queryClient.invalidateQueries({ queryKey: queryKeys.devices(device.username) });
    },
    onError: (error) => {
      setConfirming(false);
      toast.error(`${device.name} was not signed out. ${describeSyncError(error)}`);
    },
  });

  return (
    <li className="device-row">
      <div>
        <span className="device-name">{device.name}</span>
        <p className="muted">
          Signed in {formatDate(device.createdDate)} · last seen{' '}
          {device.lastSeen ? formatRelativeTime(device.lastSeen) : 'never'}
        </p>
      </div>
      <button
        type="button"
        className="button button--small button--danger"
        onClick={() => setConfirming(true)}
        aria-label={`Sign out device ${device.name}`}
      >
        Sign out device
      </button>
      <ConfirmDialog
        open={confirming}
        title={`Sign out ${device.name}?`}
        confirmLabel="Sign out device"
        danger
        busy={signOut.isPending}
        onConfirm={() => signOut.mutate()}
        onCancel={() => setConfirming(false)}
      >
        <p>
          Its token stops working at once; changes it has not sent stay on it until someone signs it
          in again.
        </p>
      </ConfirmDialog>
    </li>
  );
}
