import { Type, type Static } from '@sinclair/typebox';
import { Timestamp, Username } from './common';

export const ROLES = ['viewer', 'editor', 'admin'] as const;
export const RoleSchema = Type.Union(
  ROLES.map((role) => Type.Literal(role)),
  { $id: 'Role' },
);
export type Role = (typeof ROLES)[number];

const Password = Type.String({
  minLength: 8,
  maxLength: 1024,
  description: 'At least 8 characters',
  'x-words': {
    minLength: 'A password has at least 8 characters.',
    maxLength: 'A password has at most 1,024 characters.',
  },
});
const AllowEdit = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: 200,
  description: 'Categories this user may update; "*" means all',
});

export const UserSchema = Type.Object(
  {
    username: Type.String(),
    role: RoleSchema,
    allowEdit: Type.Array(Type.String()),
    createdTime: Timestamp,
    modifiedTime: Timestamp,
  },
  { $id: 'User' },
);

export const UserListSchema = Type.Object(
  { lists: Type.Array(UserSchema), total: Type.Integer() },
  { $id: 'UserList' },
);

export const CreateUserBodySchema = Type.Object(
  {
    username: Username,
    password: Password,
    role: RoleSchema,
    allowEdit: Type.Optional(AllowEdit),
  },
  { $id: 'CreateUserBody', additionalProperties: false },
);

export const UpdateUserBodySchema = Type.Object(
  {
    role: Type.Optional(RoleSchema),
    allowEdit: Type.Optional(AllowEdit),
    password: Type.Optional(Password),
  },
  { $id: 'UpdateUserBody', additionalProperties: false, minProperties: 1 },
);

export const UserUnlockedSchema = Type.Object(
  {
    username: Type.String(),
    wasLocked: Type.Boolean({
      description: 'Whether failed sign-ins had locked the user out until now',
    }),
  },
  { $id: 'UserUnlocked' },
);

export const UsernameParamsSchema = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 64 }),
});

export type User = Static<typeof UserSchema>;
export type CreateUserBody = Static<typeof CreateUserBodySchema>;
export type UpdateUserBody = Static<typeof UpdateUserBodySchema>;
export type UserUnlocked = Static<typeof UserUnlockedSchema>;
