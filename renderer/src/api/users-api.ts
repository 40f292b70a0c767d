import type { CreateUserBody, UpdateUserBody, User } from '../../../shared';
import { apiRequest } from './api-client';

const BASE = '/api/v1/users';

export interface UserList {
  lists: User[];
  total: number;
}

export const listUsers = (signal?: AbortSignal) => apiRequest<UserList>('GET', BASE, { signal });
export const createUser = (body: CreateUserBody) => apiRequest<User>('POST', BASE, { body });
export const updateUser = (username: string, body: UpdateUserBody) =>
  apiRequest<User>('PUT', `${BASE}/${encodeURIComponent(username)}`, { body });
export const deleteUser = (username: string) =>
  apiRequest<void>('DELETE', `${BASE}/${encodeURIComponent(username)}`);
