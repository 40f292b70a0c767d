import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import {
  CreateUserBodySchema,
  errorResponses,
  UpdateUserBodySchema,
  UserListSchema,
  UsernameParamsSchema,
  UserSchema,
  type CreateUserBody,
  type UpdateUserBody,
} from '../../shared';

const errors = errorResponses(400, 401, 403, 404, 409);
type Params = { username: string };

/** Admin-only user management (DESIGN §2). */
export default async function userRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  // Before the body is read: a non-admin learns nothing of these routes' schemas (DESIGN §13).
  app.addHook('onRequest', app.requireRole('admin'));
  const common = { tags: ['users'], security: [{ session: [] }] };

  app.get(
    '/api/v1/users',
    { schema: { ...common, summary: 'List users', response: { 200: UserListSchema, ...errors } } },
    async () => {
      const lists = app.userService.list();
      return { lists, total: lists.length };
    },
  );

  app.post<{ Body: CreateUserBody }>(
    '/api/v1/users',
    {
      schema: {
        ...common,
        summary: 'Create a user',
        body: CreateUserBodySchema,
        response: { 201: UserSchema, ...errors },
      },
    },
    async (request, reply) => reply.status(201).send(await app.userService.create(request.body)),
  );

  app.get<{ Params: Params }>(
    '/api/v1/users/:username',
    {
      schema: {
        ...common,
        summary: 'One user',
        params: UsernameParamsSchema,
        response: { 200: UserSchema, ...errors },
      },
    },
    async (request) => app.userService.get(request.params.username),
  );

  app.put<{ Params: Params; Body: UpdateUserBody }>(
    '/api/v1/users/:username',
    {
      schema: {
        ...common,
        summary: 'Change role, allowEdit or password',
        description:
          'A password or role change ends all of that user’s sessions. The last admin cannot be demoted.',
        params: UsernameParamsSchema,
        body: UpdateUserBodySchema,
        response: { 200: UserSchema, ...errors },
      },
    },
    async (request) => app.userService.update(request.params.username, request.body),
  );

  app.delete<{ Params: Params }>(
    '/api/v1/users/:username',
    {
      schema: {
        ...common,
        summary: 'Delete a user and end its sessions',
        params: UsernameParamsSchema,
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      await app.userService.delete(request.params.username);
      return reply.status(204).send();
    },
  );
}
