import { createReadStream } from 'node:fs';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { waitInWords } from '../../shared';
import { publicPortfolio } from '../domain/public-portfolio';
import {
  renderShareNoticePage,
  renderSharePage,
  renderSharePasswordPage,
  SHARE_PAGE_CSP,
} from '../shares/share-page';

type TokenParams = { token: string };
type FileParams = TokenParams & { fileId: string };

/** Widest image a share page shows (a thumbnail width; never wider than the original). */
const SHARE_IMAGE_WIDTH = 1024;
/** The password form is all a share page reads from a body. */
const FORM_BYTES = 4096;

const NOT_FOUND = {
  title: 'This link does not work',
  message: 'There is nothing at this address. Check that the link was copied whole.',
};
const GONE = {
  title: 'This link has ended',
  message:
    'The portfolio is no longer shared through this link: it has expired, been used up or been ' +
    'withdrawn. Ask the person who sent it for a new one.',
};

/**
 * The public side of share links (DESIGN §15): `/s/<token>` shows one portfolio read-only, the
 * password form posts back to it, and `/s/<token>/files/<fileId>` serves its images through
 * signed, short-lived links. Hostile ground: its own rate limit, pages without script under a
 * strict CSP, no cookies, never cached, no referrer; anything else under /s is a 404 page (never
 * the web app's).
 */
export default async function sharePageRoutes(
  app: FastifyInstance,
  options: { requestsPerMinute: number },
) {
  const service = app.shareService;
  const config = { rateLimit: { max: options.requestsPerMinute, timeWindow: 60_000 } };
  const route = { schema: { hide: true }, config };

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BYTES },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  app.addHook('onSend', async (_request, reply) => {
    reply
      .header('content-security-policy', SHARE_PAGE_CSP)
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header('x-robots-tag', 'noindex, nofollow')
      .removeHeader('set-cookie');
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status === 429) {
      return page(reply, 429, {
        title: 'Too many tries',
        message: 'This link was opened too often just now. Please wait a minute and try again.',
      });
    }
    if (status >= 500) request.log.error({ err: error }, 'share page failed');
    if (status === 413 || status === 415 || status === 400) {
      return page(reply, status, {
        title: 'That did not work',
        message: 'The form could not be read. Go back to the link and try again.',
      });
    }
    return page(reply, status >= 500 ? 500 : 404, status >= 500 ? FAILED : NOT_FOUND);
  });

  const show = async (
    request: FastifyRequest<{ Params: TokenParams }>,
    reply: FastifyReply,
    password?: string,
  ) => {
    const { token } = request.params;
    const opening = await service.open(token, request.ip, password);
    switch (opening.kind) {
      case 'unknown':
        return page(reply, 404, NOT_FOUND);
      case 'gone':
        return page(reply, 410, GONE);
      case 'throttled':
        return page(reply.header('retry-after', Math.ceil(opening.retryAfterMs / 1000)), 429, {
          title: 'Too many wrong passwords',
          message: `Please wait ${waitInWords(opening.retryAfterMs / 1000)} before trying again.`,
        });
      case 'password':
        return reply
          .status(opening.wrong ? 401 : 200)
          .type('text/html; charset=utf-8')
          .send(renderSharePasswordPage({ action: `/s/${token}`, wrong: opening.wrong }));
      case 'shown':
        return reply.type('text/html; charset=utf-8').send(
          renderSharePage({
            portfolio: publicPortfolio(opening.portfolio),
            imageUrl: opening.imageUrl,
          }),
        );
    }
  };

  app.get<{ Params: TokenParams }>('/s/:token', route, (request, reply) => show(request, reply));

  app.post<{ Params: TokenParams; Body: unknown }>('/s/:token', route, (request, reply) => {
    const body = request.body as Record<string, unknown> | undefined;
    const password = typeof body?.password === 'string' ? body.password : '';
    return show(request, reply, password);
  });

  app.get<{ Params: FileParams; Querystring: Record<string, string | undefined> }>(
    '/s/:token/files/:fileId',
    route,
    async (request, reply) => {
      const { token, fileId } = request.params;
      const { exp, sig } = request.query;
      const image = await service.image(token, fileId, Number(exp), String(sig ?? ''));
      if (!image) return page(reply, 404, NOT_FOUND);
      const path = await app.thumbnails.get(image.sha256, SHARE_IMAGE_WIDTH);
      return reply.type('image/webp').send(createReadStream(path));
    },
  );

  // Nothing else lives under /s: not the web app's page, not the API's JSON.
  const nothing = (_request: FastifyRequest, reply: FastifyReply) => page(reply, 404, NOT_FOUND);
  app.all('/s', route, nothing);
  app.all('/s/*', route, nothing);
}

const FAILED = {
  title: 'Something went wrong',
  message: 'The page could not be shown just now. Please try again in a moment.',
};

function page(reply: FastifyReply, status: number, notice: { title: string; message: string }) {
  return reply.status(status).type('text/html; charset=utf-8').send(renderShareNoticePage(notice));
}
