import { randomBytes } from 'node:crypto';
import type { CreateUserBody, UpdateUserBody, User } from '../../shared';
import type { AuthOptions } from '../config';
import { ApiError } from '../errors';
import type { UserRecord, UserRepository } from '../repositories/user-repository';
import { hashPassword } from '../auth/password';

export function publicUser({ passwordHash: _hash, ...user }: UserRecord): User {
  return user;
}

export class UserService {
  constructor(
    private readonly users: UserRepository,
    private readonly config: AuthOptions,
    private readonly now: () => number = Date.now,
  ) {}

  list(): User[] {
    return this.users.list().map(publicUser);
  }

  get(username: string): User {
    const user = this.users.get(username);
    if (!user) throw new ApiError('USER_NOT_FOUND', `No user named "${username}".`);
    return publicUser(user);
  }

  async create(body: CreateUserBody): Promise<User> {
    if (this.users.get(body.username))
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
    // Re-check after the async hash: another request may have taken the name meanwhile.
    if (this.users.get(body.username))
      throw new ApiError('USERNAME_TAKEN', `The username "${body.username}" is taken.`);
    await this.users.save(user);
    return publicUser(user);
  }

  /** A password change or a role change ends every session of that user. */
  async update(username: string, body: UpdateUserBody): Promise<User> {
    const passwordHash = body.password
      ? await hashPassword(body.password, this.config.scryptLogN)
      : undefined;
    const current = this.users.get(username);
    if (!current) throw new ApiError('USER_NOT_FOUND', `No user named "${username}".`);
    if (current.role === 'admin' && body.role && body.role !== 'admin') this.assertNotLastAdmin();
    const next: UserRecord = {
      ...current,
      role: body.role ?? current.role,
      allowEdit: body.allowEdit ?? current.allowEdit,
      passwordHash: passwordHash ?? current.passwordHash,
      modifiedTime: this.now(),
    };
    const endSessions = passwordHash !== undefined || next.role !== current.role;
    await this.users.save(next, endSessions ? this.users.endSessionsOps(username) : []);
    return publicUser(next);
  }

  async delete(username: string): Promise<void> {
    const current = this.users.get(username);
    if (!current) throw new ApiError('USER_NOT_FOUND', `No user named "${username}".`);
    if (current.role === 'admin') this.assertNotLastAdmin();
    await this.users.delete(username);
  }

  private assertNotLastAdmin(): void {
    if (this.users.countAdmins() <= 1) throw new ApiError('LAST_ADMIN');
  }

  /**
   * First start: with no users at all, create the admin. Returns the generated password when
   * none was given, so the launcher can show it once.
   */
  async bootstrapAdmin(options: {
    username?: string;
    password?: string;
  }): Promise<{ username: string; password: string } | null> {
    if (this.users.count() > 0) return null;
    const username = options.username || 'admin';
    const password = options.password || randomBytes(12).toString('base64url');
    await this.create({ username, password, role: 'admin', allowEdit: ['*'] });
    return options.password ? null : { username, password };
  }
}
