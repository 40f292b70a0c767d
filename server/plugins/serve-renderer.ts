import { stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { contentSecurityPolicy } from '../../shared/content-security-policy';

export interface ServeRendererOptions {
  /** The built renderer (out/renderer), or null when it has not been built. */
  rendererDir: string | null;
}

/** Vite names everything under assets/ by content hash: a changed file gets a new name. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** index.html names the current hashed assets: always revalidate it. */
const REVALIDATE = 'no-cache';
/** Other files in the build (favicon): cache briefly. */
const SHORT = 'public, max-age=3600';

/** Sent with index.html; the Electron shell enforces the same policy (shared/). */
const CONTENT_SECURITY_POLICY = contentSecurityPolicy();

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Portfolio Manager</title></head>
<body>
<h1>Portfolio Manager</h1>
<p>The API is running, but the user interface is not built yet.</p>
<p>Run <code>npm run build:renderer</code> and reload this page. The API documentation is at <a href="/docs">/docs</a>.</p>
</body>
</html>
`;

function isServerPath(path: string): boolean {
  return (
    path === '/api' ||
    path.startsWith('/api/') ||
    path === '/docs' ||
    path.startsWith('/docs/') ||
    // Share links (routes/share-pages.ts) answer every /s path themselves, a 404 page included.
    path === '/s' ||
    path.startsWith('/s/') ||
    // The public showcase answers its own paths, a 404 of its own while it is off.
    path === '/showcase' ||
    path.startsWith('/showcase/')
  );
}

/**
 * A URL only a file of the build can answer: a file name under an `assets` folder at any depth
 * (what a page asking for './assets/…' from a deep route requests), or any script, stylesheet
 * or source map. Vite's asset names always carry an extension, so client routes such as
 * /portfolios/assets/edit (a portfolio named "assets") stay routes. When no such file exists the
 * answer is 404, never index.html: HTML in place of a script is a blank page, not an error.
 */
function isBuildFileUrl(path: string): boolean {
  const segments = path.split('/');
  const name = segments.at(-1) ?? '';
  if (!/\.[A-Za-z0-9]+$/.test(name)) return false;
  return segments.slice(0, -1).includes('assets') || /\.(?:m?js|css|map)$/i.test(name);
}

function wantsHtml(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('text/html');
}

/** The file under `root` that `urlPath` names, or null when it does not exist or leaves `root`. */
async function fileUnder(root: string, urlPath: string): Promise<string | null> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const candidate = resolve(root, `.${decoded.startsWith('/') ? decoded : `/${decoded}`}`);
  const inside = relative(root, candidate);
  if (!inside || inside.startsWith('..') || isAbsolute(inside)) return null;
  try {
    return (await stat(candidate)).isFile() ? inside.split('\\').join('/') : null;
  } catch {
    return null;
  }
}

function cacheControlFor(file: string): string {
  if (file === 'index.html') return REVALIDATE;
  return file.startsWith('assets/') ? IMMUTABLE : SHORT;
}

function sendIndex(reply: FastifyReply) {
  return reply
    .header('Cache-Control', REVALIDATE)
    .header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .sendFile('index.html', { cacheControl: false });
}

/**
 * Serves the built React UI at `/`. Files of the build are served as they are; any other GET
 * that asks for HTML outside /api and /docs, and does not name a build file, is a client-side
 * route and gets index.html, so deep links and reloads work. Everything else falls through to
 * the API's 404.
 */
async function rendererRoutes(app: FastifyInstance, options: ServeRendererOptions) {
  const root = options.rendererDir ? resolve(options.rendererDir) : null;
  if (root) {
    // Only the sendFile decorator: routing stays here, so the fallback rules live in one place
    // and a rebuilt renderer is picked up without a restart.
    await app.register(fastifyStatic, { root, serve: false });
  }

  app.get('/*', { schema: { hide: true } }, async (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    if (isServerPath(path)) return reply.callNotFound();

    if (!root) {
      if (!wantsHtml(request)) return reply.callNotFound();
      return reply
        .header('Cache-Control', REVALIDATE)
        .type('text/html; charset=utf-8')
        .send(NOT_BUILT_PAGE);
    }

    const file = path === '/' ? null : await fileUnder(root, path);
    if (file && file !== 'index.html') {
      return reply
        .header('Cache-Control', cacheControlFor(file))
        .header('X-Content-Type-Options', 'nosniff')
        .sendFile(file, { cacheControl: false });
    }
    if (file === 'index.html' || path === '/') return sendIndex(reply);
    if (wantsHtml(request) && !isBuildFileUrl(path)) return sendIndex(reply);
    return reply.callNotFound();
  });
}

export default fp(
  async function serveRenderer(app: FastifyInstance, options: ServeRendererOptions) {
    // Encapsulated: the sendFile decorator and the catch-all route stay out of the API's scope.
    await app.register(rendererRoutes, options);
  },
  { name: 'serve-renderer' },
);
