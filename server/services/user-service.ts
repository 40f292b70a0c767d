import { randomBytes } from 'node:crypto';
import type { CreateUserBody, UpdateUserBody, User, UserUnlocked } from '../../shared';
import type { AuthOptions } from '../config';
import { ApiError } from '../errors';
import type { UserRecord, UserRepository } from '../repositories/user-repository-contract';
import { hashPassword } from '../auth/password';
import { SignInThrottle } from '../auth/sign-in-throttle';

export function publicUser({ passwordHash: _hash, ...user }: UserRecord): User {
  return user;
}

export class UserService {
  private readonly throttle: SignInThrottle;

  constructor(
    private readonly users: UserRepository,
    private readonly config: AuthOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.throttle = new SignInThrottle(users, config.maxFailedSignIns, config.failureWindowMs, now);
  }

  async list(): Promise<User[]> {
    return (await this.users.list()).map(publicUser);
  }

  async get(username: string): Promise<User> {
    const user = await this.users.get(username);
    if (!user) throw new ApiError('USER_NOT_FOUND', `No user named "${username}".`);
    return publicUser(user);
  }

  async create(body: CreateUserBody): Promise<User> {
    if (await this.users.get(body.username))
      throw new ApiError('USERNAME_TAKEN', `The username "${body.username}" is taken.`);
    const now = this.now();
    const user: UserRecord = {
      username: body.username,
      role: body.role,
      allowEdit: body.allowEdit ?? [],
      passwordHash: await hashPassword(body.password, this.config.scryptLogN),
      createdTime: now,
      modifiedTime: now,
    };
    // Another request (or instance) may have taken the name during the hash: insert checks again.
    if (!(await this.users.insert(user)))
      throw new ApiError('USERNAME_TAKEN', `The username "${body.username}" is taken.`);
    return publicUser(user);
  }

  /** A password change or a role change ends every session and device token of that user. */
  async update(username: string, body: UpdateUserBody): Promise<User> {
    const passwordHash = body.password
      ? await hashPassword(body.password, this.config.scryptLogN)
      : undefined;
    const current = await this.users.get(username);
    if (!current) throw new ApiError('USER_NOT_FOUND', `No user named "${username}".`);
    if (current.role === 'admin' && body.role && body.role !== 'admin')
      await this.assertNotLastAdmin();
    const next: UserRecord = {
      ...current,
      role: body.role ?? current.role,
      allowEdit: body.allowEdit ?? current.allowEdit,
      passwordHash: passwordHash ?? current.passwordHash,
      modifiedTime: this.now(),
    };
    const endSessions = passwordHash !== undefined || next.role !== current.role;
    await this.users.update(next, { endSessions, now: next.modifiedTime });
    return publicUser(next);
  }

  async delete(username: string): Promise<void> {
    const current = await this.users.get(username);
    if (!current) throw new ApiError('USER_NOT_FOUND', `No user named "${username}".`);
    if (current.role === 'admin') await this.assertNotLastAdmin();
    if (!(await this.users.delete(username)))
      throw new ApiError('USER_NOT_FOUND', `No user named "${username}".`);
  }

  /** Ends a lockout after failed sign-ins, so the user may sign in again at once. */
  async unlock(username: string): Promise<UserUnlocked> {
    if (!(await this.users.get(username)))
      throw new ApiError('USER_NOT_FOUND', `No user named "${username}".`);
    return { username, wasLocked: await this.throttle.unlock(username) };
  }

  private async assertNotLastAdmin(): Promise<void> {
    if ((await this.users.countAdmins()) <= 1) throw new ApiError('LAST_ADMIN');
  }

  /**
   * First start: with no users at all, create the admin. Returns who was created, with the
   * generated password when none was given, so the launcher can show it once; null when the
   * library already had users.
   */
  async bootstrapAdmin(options: {
    username?: string;
    password?: string;
  }): Promise<{ username: string; generatedPassword: string | null } | null> {
    if ((await this.users.count()) > 0) return null;
    const username = options.username || 'admin';
    const password = options.password || randomBytes(12).toString('base64url');
    try {
      await this.create({ username, password, role: 'admin', allowEdit: ['*'] });
    } catch (error) {
      // Another instance starting on the same database made the first admin meanwhile.
      if (error instanceof ApiError && error.code === 'USERNAME_TAKEN') return null;
      throw error;
    }
    return { username, generatedPassword: options.password ? null : password };
  }
}
