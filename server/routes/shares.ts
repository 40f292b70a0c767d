import type { FastifyInstance } from 'fastify';
import {
  CreatedShareSchema,
  CreateShareBodySchema,
  PortfolioIdParamsSchema,
  ShareListSchema,
  ShareParamsSchema,
} from '../../shared';
import { empty, errors, json } from '../openapi/responses';
import { caller } from '../plugins/auth';
import { bodyValidatedByService } from './route-support';

type PortfolioParams = { portfolioId: string };
type ShareParams = PortfolioParams & { shareId: string };

/** Share links of one portfolio (DESIGN §15): made, listed and revoked by who may change it. */
export default async function shareRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  const service = app.shareService;
  const common = { tags: ['shares'], security: [{ session: [] }] };
  const who =
    'Editors with the portfolio’s category in allowEdit, and admins (the same rule as changing ' +
    'it), checked before the body.';

  app.post<{ Params: PortfolioParams }>(
    '/api/v1/portfolio/:portfolioId/shares',
    {
      schema: {
        ...common,
        operationId: 'createShare',
        summary: 'Make a share link that shows the portfolio read-only',
        description:
          `${who} The link (\`url\`, \`/s/<token>\` on this server) works for anyone holding it, ` +
          'published or not, until `expiresAt`, `maxUses` opens or revocation; it is answered ' +
          'once: the server keeps only hashes of the token and the password.',
        params: PortfolioIdParamsSchema,
        body: CreateShareBodySchema,
        response: {
          201: json(CreatedShareSchema, 'The share and its link'),
          ...errors('FORBIDDEN', 'CATEGORY_NOT_ALLOWED', 'PORTFOLIO_NOT_FOUND'),
        },
      },
      validatorCompiler: bodyValidatedByService(app),
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(await service.create(caller(request).user, request.params.portfolioId, request.body)),
  );

  app.get<{ Params: PortfolioParams }>(
    '/api/v1/portfolio/:portfolioId/shares',
    {
      schema: {
        ...common,
        operationId: 'listShares',
        summary: 'The portfolio’s share links not revoked, oldest first',
        description: `${who} Tokens are never listed.`,
        params: PortfolioIdParamsSchema,
        response: {
          200: json(ShareListSchema, 'The shares'),
          ...errors('FORBIDDEN', 'CATEGORY_NOT_ALLOWED', 'PORTFOLIO_NOT_FOUND'),
        },
      },
    },
    async (request) => ({
      shares: await service.list(caller(request).user, request.params.portfolioId),
    }),
  );

  app.delete<{ Params: ShareParams }>(
    '/api/v1/portfolio/:portfolioId/shares/:shareId',
    {
      schema: {
        ...common,
        operationId: 'revokeShare',
        summary: 'Revoke a share link',
        description: `${who} Its link answers 410 from now on.`,
        params: ShareParamsSchema,
        response: {
          204: empty('Revoked'),
          ...errors('FORBIDDEN', 'CATEGORY_NOT_ALLOWED', 'PORTFOLIO_NOT_FOUND', 'SHARE_NOT_FOUND'),
        },
      },
    },
    async (request, reply) => {
      await service.revoke(
        caller(request).user,
        request.params.portfolioId,
        request.params.shareId,
      );
      return reply.status(204).send();
    },
  );
}
