/**
 * The public showcase (DESIGN §15) on the real server over real HTTP, on the run's backend: off
 * is a 404 everywhere; on, only published and active work shows, with only its public fields.
 */
import { request as httpRequest } from 'node:http';
import fc from 'fast-check';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures, uploadMultipart } from '../helpers/file-fixtures';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

const SETTINGS = '/api/v1/settings/showcase';

/** A GET as a browser or crawler sends it: no session. */
async function visit(server: TestServer, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(server.url + path, { headers: { accept: 'text/html', ...headers } });
  const bytes = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    headers: response.headers,
    text: bytes.toString('utf8'),
    bytes,
  };
}

/** A GET with the path sent exactly as written (fetch would normalize dots and slashes). */
function rawGet(server: TestServer, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { hostname, port, path, method: 'GET', headers: { accept: 'text/html' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function create(server: TestServer, overrides: Record<string, unknown>, command?: string) {
  const made = await server.request('POST', '/api/v1/portfolio', {
    body: portfolioBody(overrides),
  });
  expect(made.status).toBe(201);
  const id = made.body.portfolioId as string;
  if (command) await run(server, id, command);
  return id;
}

async function run(server: TestServer, id: string, command: string) {
  const { body: current } = await server.request('GET', `/api/v1/portfolio/${id}`);
  const { memberBarcode, category, projectTitle, projectDetail } = current;
  const answer = await server.request('PUT', `/api/v1/portfolio/${id}`, {
    body: { memberBarcode, category, projectTitle, projectDetail, command },
  });
  expect(answer.status).toBe(200);
}

const PUBLIC_PATHS = [
  '/showcase',
  '/showcase/feed.json',
  '/showcase/rss.xml',
  '/showcase/sitemap.xml',
];

describe('showcase', () => {
  let server: TestServer;
  let published: string;

  beforeAll(async () => {
    server = await startTestServer({ showcase: { requestsPerMinute: 100_000 } });
    published = await create(
      server,
      { portfolioId: 'lake-house', projectTitle: 'Lake house', relativeCategory: ['Timber'] },
      'publish',
    );
  });
  afterAll(() => server.close());

  it('is off by default: every /showcase path is the same 404, never the web app', async () => {
    const settings = await server.request('GET', SETTINGS);
    expect(settings.status).toBe(200);
    expect(settings.body).toMatchObject({ enabled: false, logo: null });
    const paths = [
      ...PUBLIC_PATHS,
      `/showcase/${published}`,
      '/showcase/assets/showcase.css',
      '/showcase/x/y',
    ];
    const bodies = new Set<string>();
    for (const path of paths) {
      const answer = await visit(server, path);
      expect(answer.status, path).toBe(404);
      expect(answer.headers.get('content-type')).toContain('text/html');
      expect(answer.text).not.toContain('Lake house');
      bodies.add(answer.text);
    }
    expect(bodies.size).toBe(1);
  });

  it('is changed by admins only, and keeps its settings across a restart', async () => {
    const viewer = await server.userSession('viewer1', 'viewer');
    const refused = await server.request('PUT', SETTINGS, {
      session: viewer,
      body: { enabled: true, title: 'Ours', intro: '' },
    });
    expect(refused.status).toBe(403);
    const badLogo = await server.request('PUT', SETTINGS, {
      body: {
        enabled: false,
        title: 'Ours',
        intro: '',
        logo: Buffer.from('<svg/>').toString('base64'),
      },
    });
    expect(badLogo.status).toBe(400);
    expect(badLogo.body.message).toBe('The logo must be a PNG, JPEG or WebP image.');

    const logo = (
      await sharp({ create: { width: 8, height: 8, channels: 3, background: 'navy' } })
        .png()
        .toBuffer()
    ).toString('base64');
    const saved = await server.request('PUT', SETTINGS, {
      body: {
        enabled: true,
        title: 'Studio work',
        intro: 'What our members made.',
        logo,
        staffPicksFirst: true,
      },
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({
      enabled: true,
      title: 'Studio work',
      staffPicksFirst: true,
    });
    expect(saved.body.logo).toBe(`data:image/png;base64,${logo}`);

    await server.stop();
    server = await startTestServer({
      dataDir: server.dataDir,
      showcase: { requestsPerMinute: 100_000 },
    });
    const again = await server.request('GET', SETTINGS);
    expect(again.body).toMatchObject({
      enabled: true,
      title: 'Studio work',
      intro: 'What our members made.',
    });
    const logoAnswer = await visit(server, '/showcase/assets/logo');
    expect(logoAnswer.headers.get('content-type')).toBe('image/png');
    expect(logoAnswer.bytes.toString('base64')).toBe(logo);
  });

  it('shows published work on the gallery, its page, the feeds and the sitemap', async () => {
    const gallery = await visit(server, '/showcase');
    expect(gallery.status).toBe(200);
    expect(gallery.text).toContain('Lake house');
    expect(gallery.text).toContain('<meta property="og:title"');
    expect(gallery.text).toContain('href="/showcase/feed.json"');
    expect(gallery.text).toContain('href="/showcase/rss.xml"');
    expect(gallery.text).toContain('href="/showcase/sitemap.xml"');
    expect(gallery.text).toContain('href="/showcase?tag=Timber"');

    const page = await visit(server, `/showcase/${published}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Lake house</h1>');
    expect(page.text).toContain(
      `<meta property="og:url" content="${server.url}/showcase/${published}"/>`,
    );

    const feed = JSON.parse((await visit(server, '/showcase/feed.json')).text);
    expect(feed.version).toBe('https://jsonfeed.org/version/1.1');
    expect(feed.items.map((item: { url: string }) => item.url)).toEqual([
      `${server.url}/showcase/${published}`,
    ]);
    expect((await visit(server, '/showcase/rss.xml')).text).toContain(
      `<link>${server.url}/showcase/${published}</link>`,
    );
    expect((await visit(server, '/showcase/sitemap.xml')).text).toContain(
      `<loc>${server.url}/showcase/${published}</loc>`,
    );

    const search = await visit(server, '/showcase?q=lake');
    expect(search.text).toContain('Lake house');
    const other = await visit(server, '/showcase?category=Nothing');
    expect(other.text).not.toContain('Lake house');
  });

  it('answers unpublished, inactive and unknown ids with the same 404 page', async () => {
    const draft = await create(server, { portfolioId: 'draft-1', projectTitle: 'Secret draft' });
    const inactive = await create(
      server,
      { portfolioId: 'gone-1', projectTitle: 'Retired' },
      'publish',
    );
    await run(server, inactive, 'deactivate');
    const answers = await Promise.all(
      [draft, inactive, 'never-was'].map((id) => visit(server, `/showcase/${id}`)),
    );
    for (const answer of answers) expect(answer.status).toBe(404);
    expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);
    const gallery = await visit(server, '/showcase');
    expect(gallery.text).not.toContain('Secret draft');
    expect(gallery.text).not.toContain('Retired');
  });

  it('drops unpublished work from every page, feed and sitemap at once', async () => {
    const id = await create(
      server,
      { portfolioId: 'brief-1', projectTitle: 'Brief show' },
      'publish',
    );
    const before = await visit(server, `/showcase/${id}`);
    const etag = before.headers.get('etag')!;
    expect((await visit(server, `/showcase/${id}`, { 'if-none-match': etag })).status).toBe(304);
    const galleryTag = (await visit(server, '/showcase')).headers.get('etag')!;
    await run(server, id, 'unpublish');
    expect((await visit(server, `/showcase/${id}`, { 'if-none-match': etag })).status).toBe(404);
    const gallery = await visit(server, '/showcase', { 'if-none-match': galleryTag });
    expect(gallery.status).toBe(200);
    for (const path of PUBLIC_PATHS) expect((await visit(server, path)).text).not.toContain(id);
  });

  it('sends a strict CSP, no referrer, no cookie, and no script or inline style', async () => {
    for (const path of [...PUBLIC_PATHS, `/showcase/${published}`, '/showcase/nope']) {
      const answer = await visit(server, path, { cookie: 'portfolio_session=whatever' });
      const csp = answer.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
      expect(answer.headers.get('set-cookie')).toBeNull();
      expect(answer.headers.get('cache-control')).toMatch(/no-cache/);
      expect(answer.text).not.toMatch(/<script|style=/i);
    }
  });

  it('answers path tricks with its 404 page', async () => {
    for (const path of [
      '/showcase/../api/v1/portfolio',
      '/showcase/%2e%2e/api/v1/portfolio',
      '/showcase/a%2Fb',
      '/showcase/lake-house%2F..%2F..%2Fapi',
      `/showcase/${'x'.repeat(5000)}`,
      '/showcase/media/lake-house/..%2F..%2Fdb.json/320.webp',
    ]) {
      const answer = await rawGet(server, path);
      expect(answer.status, path).toBe(404);
      expect(answer.body, path).toContain('This page is not on the showcase');
    }
  });

  it('shows no private value of any portfolio in any public answer', async () => {
    const token = fc.stringMatching(/^[a-z][a-z0-9]{11}$/);
    const pdf = fixtures.pdf();
    // Authors are private too (createdBy, modifiedBy): a few editors with names no page has.
    const authors = await Promise.all(
      ['qzauthorone', 'qzauthortwo', 'qzauthorthree'].map(async (username) => ({
        username,
        session: await server.userSession(username, 'editor', ['*']),
      })),
    );
    let at = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          barcode: token,
          author: fc.constantFrom(0, 1, 2),
          documentName: token,
          documentNote: token,
          processName: token,
          detail: fc.string({ minLength: 1, maxLength: 40 }).filter((text) => text.trim() !== ''),
          tags: fc.array(
            fc.string({ minLength: 1, maxLength: 12 }).filter((tag) => /\S/.test(tag)),
            { maxLength: 3 },
          ),
        }),
        async (values) => {
          at += 1;
          const { username, session: author } = authors[values.author]!;
          const made = await server.request('POST', '/api/v1/portfolio', {
            session: author,
            body: portfolioBody({
              portfolioId: `prop-${at}`,
              memberBarcode: values.barcode,
              projectDetail: values.detail,
              generalTag: values.tags,
            }),
          });
          expect(made.status).toBe(201);
          const base = `/api/v1/portfolio/prop-${at}`;
          const upload = (slot: string, name: string, description = '') =>
            uploadMultipart(server, `${base}/${slot}`, pdf, {
              filename: `${name}.pdf`,
              description,
              session: author,
            });
          expect(
            (await upload('additionalDocument', values.documentName, values.documentNote)).status,
          ).toBe(201);
          expect((await upload('draftingProcess', values.processName)).status).toBe(201);
          await run(server, `prop-${at}`, 'publish');
          const answers = await Promise.all(
            [...PUBLIC_PATHS, `/showcase/prop-${at}`].map((path) => visit(server, path)),
          );
          const everything = answers.map((answer) => answer.text).join('\n');
          expect(everything).toContain(`prop-${at}`);
          for (const secret of [
            values.barcode,
            username,
            values.documentName,
            values.documentNote,
            values.processName,
          ])
            expect(everything).not.toContain(secret);
          expect(everything).not.toMatch(/"?revision"?\s*[:=]/i);
        },
      ),
      { numRuns: 6 },
    );
  });
});

describe('showcase images', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ showcase: { requestsPerMinute: 100_000 } });
    await server.request('PUT', SETTINGS, { body: { enabled: true, title: 'Work', intro: '' } });
  });
  afterAll(() => server.close());

  it('makes each derivative once, after the upload, and serves it with srcset', async () => {
    const id = await create(server, { portfolioId: 'pictured' });
    const cover = await uploadMultipart(
      server,
      `/api/v1/portfolio/${id}/cover`,
      await fixtures.jpeg(1400, 900),
      {
        filename: 'cover.jpg',
        description: 'The house from the lake',
      },
    );
    expect(cover.status).toBe(200);
    await server.app.showcase.derivatives.idle();
    const made = server.app.showcase.derivatives.count;
    expect(made).toBe(6); // 320, 640 and 1280 px, as AVIF and WebP

    // Not public yet: its images are not either.
    const path = `/showcase/media/${id}/${cover.body.fileId}/640.webp`;
    expect((await visit(server, path)).status).toBe(404);
    await run(server, id, 'publish');

    const page = await visit(server, `/showcase/${id}`);
    expect(page.text).toContain(`${path} 640w`);
    expect(page.text).toContain('type="image/avif"');
    expect(page.text).toContain('alt="The house from the lake"');
    const image = await visit(server, path);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/webp');
    const meta = await sharp(image.bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 640, 411]);
    expect(
      (await visit(server, path.replace('640.webp', '1280.avif'))).headers.get('content-type'),
    ).toBe('image/avif');
    expect(server.app.showcase.derivatives.count).toBe(made); // served from the cache

    // Only the widths made; originals only when an admin opts in.
    expect((await visit(server, path.replace('640', '641'))).status).toBe(404);
    const original = path.replace('640.webp', 'original');
    expect((await visit(server, original)).status).toBe(404);
    await server.request('PUT', SETTINGS, {
      body: { enabled: true, title: 'Work', intro: '', publicOriginals: true },
    });
    const opened = await visit(server, original);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-type')).toBe('image/jpeg');
  });
});
