import type { FastifyInstance } from 'fastify';
import {
  CreateUserBodySchema,
  UpdateUserBodySchema,
  UserListSchema,
  UsernameParamsSchema,
  UserSchema,
  UserUnlockedSchema,
  type CreateUserBody,
  type UpdateUserBody,
} from '../../shared';
import { empty, errors, json } from '../openapi/responses';

type Params = { username: string };

/** Admin-only user management (DESIGN §2). */
export default async function userRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  // Before the body is read: a non-admin learns nothing of these routes' schemas (DESIGN §13).
  app.addHook('onRequest', app.requireRole('admin'));
  const common = { tags: ['users'], security: [{ session: [] }] };

  app.get(
    '/api/v1/users',
    {
      schema: {
        ...common,
        operationId: 'listUsers',
        summary: 'List users',
        response: { 200: json(UserListSchema, 'Every user'), ...errors('FORBIDDEN') },
      },
    },
    async () => {
      const lists = await app.userService.list();
      return { lists, total: lists.length };
    },
  );

  app.post<{ Body: CreateUserBody }>(
    '/api/v1/users',
    {
      schema: {
        ...common,
        operationId: 'createUser',
        summary: 'Create a user',
        body: CreateUserBodySchema,
        response: {
          201: json(UserSchema, 'The new user'),
          ...errors('FORBIDDEN', 'USERNAME_TAKEN'),
        },
      },
    },
    async (request, reply) => reply.status(201).send(await app.userService.create(request.body)),
  );

  app.get<{ Params: Params }>(
    '/api/v1/users/:username',
    {
      schema: {
        ...common,
        operationId: 'getUser',
        summary: 'One user',
        params: UsernameParamsSchema,
        response: { 200: json(UserSchema, 'The user'), ...errors('FORBIDDEN', 'USER_NOT_FOUND') },
      },
    },
    async (request) => app.userService.get(request.params.username),
  );

  app.put<{ Params: Params; Body: UpdateUserBody }>(
    '/api/v1/users/:username',
    {
      schema: {
        ...common,
        operationId: 'updateUser',
        summary: 'Change role, allowEdit or password',
        description:
          'A password or role change ends all of that user’s sessions. The last admin cannot be demoted.',
        params: UsernameParamsSchema,
        body: UpdateUserBodySchema,
        response: {
          200: json(UserSchema, 'The user as changed'),
          ...errors('FORBIDDEN', 'USER_NOT_FOUND', 'LAST_ADMIN'),
        },
      },
    },
    async (request) => app.userService.update(request.params.username, request.body),
  );

  app.post<{ Params: Params }>(
    '/api/v1/users/:username/unlock',
    {
      schema: {
        ...common,
        operationId: 'unlockUser',
        summary: 'End a lockout after failed sign-ins',
        description:
          'Forgets the user’s failed sign-ins from every address, so the user may sign in again at once. An address blocked for trying many usernames stays blocked until its window ends.',
        params: UsernameParamsSchema,
        response: {
          200: json(UserUnlockedSchema, 'Unlocked; says whether the user was locked out'),
          ...errors('FORBIDDEN', 'USER_NOT_FOUND'),
        },
      },
    },
    async (request) => app.userService.unlock(request.params.username),
  );

  app.delete<{ Params: Params }>(
    '/api/v1/users/:username',
    {
      schema: {
        ...common,
        operationId: 'deleteUser',
        summary: 'Delete a user and end its sessions',
        params: UsernameParamsSchema,
        response: {
          204: empty('Deleted; its sessions are ended'),
          ...errors('FORBIDDEN', 'USER_NOT_FOUND', 'LAST_ADMIN'),
        },
      },
    },
    async (request, reply) => {
      await app.userService.delete(request.params.username);
      return reply.status(204).send();
    },
  );
}
