import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from './common';
import { RoleSchema } from './user';

export const SignInBodySchema = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 64 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { $id: 'SignInBody', additionalProperties: false },
);

export const SessionSchema = Type.Object(
  {
    sessionId: Type.String({ description: 'Send it unmodified as the Authorization header' }),
    createdDate: Timestamp,
    expiredDate: Timestamp,
  },
  { $id: 'Session' },
);

/** What `GET /api/v1/appauth` answers: the caller's own session and account. */
export const CurrentSessionSchema = Type.Object(
  {
    createdDate: Timestamp,
    expiredDate: Timestamp,
    idleExpiresAt: Timestamp,
    user: Type.Object({
      username: Type.String(),
      role: RoleSchema,
      allowEdit: Type.Array(Type.String()),
    }),
  },
  { $id: 'CurrentSession' },
);

export type SignInBody = Static<typeof SignInBodySchema>;
export type Session = Static<typeof SessionSchema>;
export type CurrentSession = Static<typeof CurrentSessionSchema>;
