import { randomBytes, randomUUID } from 'node:crypto';
import {
  CreateDeviceBodySchema,
  isAdmin,
  isStaff,
  type CreatedDevice,
  type Device,
} from '../../shared';
import { hashSessionId, type Authenticated } from '../auth/session-service';
import { ApiError } from '../errors';
import type { DeviceRecord, UserRepository } from '../repositories/user-repository-contract';
import { bodyValidator } from '../validation/body-validator';

/** A device token lives until it is revoked; the date only keeps `expiredDate` meaningful. */
const DEVICE_LIFETIME_MS = 100 * 365 * 86_400_000;

const validateCreate = bodyValidator(CreateDeviceBodySchema);

/**
 * Device tokens (DESIGN §10): a replica exchanges a session (signed in with a password) for a
 * long-lived token once, and the password is never stored. A device is a session record of kind
 * `device` (stored as a hash like every session), with its name and the replica it pushes for.
 */
export class DeviceService {
  constructor(
    private readonly users: UserRepository,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A new device for the caller. Only a password session may make one (a device cannot breed
   * devices). The replica id is bound to the device: another user's live device holding it is a
   * 409; the caller's own older device for the same replica is revoked in the same commit (the
   * replica signed in again).
   */
  async create(auth: Authenticated, rawBody: unknown): Promise<CreatedDevice> {
    if (!isStaff(auth.user))
      throw new ApiError('FORBIDDEN', 'Sync needs the editor or admin role.');
    if (auth.session.kind === 'device') {
      throw new ApiError('FORBIDDEN', 'Sign in with a password to add a device.');
    }
    const body = validateCreate(rawBody);
    const now = this.now();
    const token = randomBytes(32).toString('base64url');
    const device: DeviceRecord = {
      kind: 'device',
      deviceId: randomUUID(),
      name: body.name,
      replicaId: body.replicaId,
      username: auth.user.username,
      createdDate: now,
      expiredDate: now + DEVICE_LIFETIME_MS,
      lastSeen: now,
    };
    // Atomic in the repository: another user's live device for the replica refuses, the caller's
    // own is revoked in the same change.
    if ((await this.users.createDevice(hashSessionId(token), device)) === 'replica-taken') {
      throw new ApiError(
        'REPLICA_ID_TAKEN',
        `The replica id "${body.replicaId}" belongs to another user's device.`,
      );
    }
    return {
      deviceId: device.deviceId,
      token,
      name: body.name,
      replicaId: body.replicaId,
      username: device.username,
      createdDate: now,
    };
  }

  /** The caller's live devices; an admin sees everyone's, or one user's with `username`. */
  async list(auth: Authenticated, username?: string): Promise<Device[]> {
    if (username !== undefined && username !== auth.user.username && !isAdmin(auth.user)) {
      throw new ApiError('FORBIDDEN', "Only an admin may list another user's devices.");
    }
    const only = username ?? (isAdmin(auth.user) ? undefined : auth.user.username);
    return (await this.users.listDevices(only)).map(deviceView);
  }

  /** Signs a device out of the hub: its token answers DEVICE_REVOKED from now on. */
  async revoke(auth: Authenticated, deviceId: string): Promise<void> {
    const device = await this.users.getDevice(deviceId);
    // Another user's device is not even named to a non-admin; one revoked meanwhile is gone too.
    const mayRevoke = device && (device.username === auth.user.username || isAdmin(auth.user));
    if (!mayRevoke || !(await this.users.revokeDevice(deviceId, this.now()))) {
      throw new ApiError('DEVICE_NOT_FOUND', `No device "${deviceId}".`);
    }
  }

  /**
   * Whether `replicaId` may push for this caller: a replica id is bound to the device that first
   * used it, so another live device (or a password session) using it gets 409.
   */
  async assertReplicaOf(auth: Authenticated, replicaId: string): Promise<void> {
    const owner = await this.users.deviceOfReplica(replicaId);
    if (owner && owner.deviceId !== auth.session.deviceId) {
      throw new ApiError(
        'REPLICA_ID_TAKEN',
        `The replica id "${replicaId}" belongs to another device; sign in to the hub again.`,
      );
    }
    if (!owner && auth.session.kind === 'device' && auth.session.replicaId !== replicaId) {
      throw new ApiError(
        'REPLICA_ID_TAKEN',
        `This device pushes for the replica "${auth.session.replicaId}", not "${replicaId}".`,
      );
    }
  }
}

function deviceView(device: DeviceRecord): Device {
  return {
    deviceId: device.deviceId,
    name: device.name,
    replicaId: device.replicaId,
    username: device.username,
    createdDate: device.createdDate,
    lastSeen: device.lastSeen,
  };
}
