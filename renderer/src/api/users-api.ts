import type { CreateUserBody, UpdateUserBody } from '../../../shared';
import { api, done, ok } from './api-client';
import type { components } from './openapi';

export type UserList = components['schemas']['UserList'];

const path = (username: string) => ({ params: { path: { username } } });

export const listUsers = (signal?: AbortSignal) => ok(api.GET('/api/v1/users', { signal }));
export const createUser = (body: CreateUserBody) => ok(api.POST('/api/v1/users', { body }));
export const updateUser = (username: string, body: UpdateUserBody) =>
  ok(api.PUT('/api/v1/users/{username}', { ...path(username), body }));
export const unlockUser = (username: string) =>
  ok(api.POST('/api/v1/users/{username}/unlock', path(username)));
export const deleteUser = (username: string) =>
  done(api.DELETE('/api/v1/users/{username}', path(username)));
