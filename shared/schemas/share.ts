import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from './common';

/** The limits of a share link's own fields (DESIGN §15). */
export const SHARE_LIMITS = { passwordMin: 4, passwordMax: 200, maxUses: 1_000_000 } as const;

export const CreateShareBodySchema = Type.Object(
  {
    expiresAt: Type.Integer({
      minimum: 0,
      description: 'When the link stops working (ms since the Unix epoch); must be in the future',
      'x-words': {
        minimum: 'The expiry date must be in the future.',
        type: 'The expiry date must be a date.',
      },
    }),
    password: Type.Optional(
      Type.String({
        minLength: SHARE_LIMITS.passwordMin,
        maxLength: SHARE_LIMITS.passwordMax,
        description: 'Asked for before the portfolio is shown; stored only as a hash',
        'x-words': {
          minLength: `A share password has at least ${SHARE_LIMITS.passwordMin} characters.`,
          maxLength: `A share password has at most ${SHARE_LIMITS.passwordMax} characters.`,
        },
      }),
    ),
    maxUses: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: SHARE_LIMITS.maxUses,
        description: 'How many times the link may be opened',
        'x-words': {
          minimum: 'The most uses is at least 1.',
          maximum: `The most uses is at most ${SHARE_LIMITS.maxUses}.`,
          type: 'The most uses is a whole number.',
        },
      }),
    ),
  },
  { $id: 'CreateShareBody', additionalProperties: false },
);
export type CreateShareBody = Static<typeof CreateShareBodySchema>;

/** A share link as listed: never its token, which only its creator ever sees. */
export const ShareSchema = Type.Object(
  {
    shareId: Type.String(),
    portfolioId: Type.String(),
    expiresAt: Timestamp,
    maxUses: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description: 'null: no limit',
    }),
    uses: Type.Integer({ minimum: 0, description: 'Times the portfolio was shown through it' }),
    hasPassword: Type.Boolean(),
    createdTime: Timestamp,
    createdBy: Type.String(),
    state: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('usedUp')], {
      description: 'Whether the link works now',
    }),
  },
  { $id: 'Share' },
);
export type Share = Static<typeof ShareSchema>;

export const CreatedShareSchema = Type.Composite(
  [
    ShareSchema,
    Type.Object({
      url: Type.String({
        description: 'The link, `/s/<token>` on this server; shown once, the server keeps a hash',
      }),
    }),
  ],
  { $id: 'CreatedShare' },
);
export type CreatedShare = Static<typeof CreatedShareSchema>;

export const ShareListSchema = Type.Object(
  { shares: Type.Array(ShareSchema) },
  { $id: 'ShareList' },
);

export const ShareParamsSchema = Type.Object({
  portfolioId: Type.String({ minLength: 1, maxLength: 64 }),
  shareId: Type.String({ minLength: 1, maxLength: 64 }),
});
