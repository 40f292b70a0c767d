import { Type, type Static } from '@sinclair/typebox';
import { ERROR_CODES, type ErrorCode } from '../error-codes';

export const ErrorDetailSchema = Type.Object(
  {
    field: Type.Optional(
      Type.String({ description: 'Where the problem is, e.g. "body.projectTitle"' }),
    ),
    message: Type.String(),
  },
  { $id: 'ErrorDetail' },
);

export const ErrorBodySchema = Type.Object(
  {
    result: Type.Literal('error'),
    statusCode: Type.Integer(),
    error: Type.String({ description: 'HTTP reason phrase' }),
    code: Type.Union(Object.keys(ERROR_CODES).map((code) => Type.Literal(code as ErrorCode))),
    message: Type.String(),
    details: Type.Array(ErrorDetailSchema),
  },
  { $id: 'ErrorBody', description: 'The one shape of every error answer' },
);

export type ErrorDetail = Static<typeof ErrorDetailSchema>;
export type ErrorBody = Static<typeof ErrorBodySchema>;
