import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/error-body';
import {
  portfolioBody,
  startTestServer,
  TEST_BACKEND,
  type TestServer,
} from '../helpers/test-server';

/** POST /api/v1/import/csv with `csv` as the body; `query` without the leading "?". */
function importCsv(
  s: TestServer,
  csv: string | Buffer,
  query = '',
  session: string | null = s.adminSession,
) {
  return s.request('POST', `/api/v1/import/csv${query ? `?${query}` : ''}`, {
    body: typeof csv === 'string' ? csv : csv.toString('latin1'),
    session,
    headers: { 'content-type': 'text/csv' },
  });
}

async function total(s: TestServer): Promise<number> {
  return (await s.request('GET', '/api/v1/portfolio?field=portfolioId&pageSize=1')).body.total;
}

async function lastSeq(s: TestServer): Promise<number> {
  let since = 0;
  for (;;) {
    const page = (await s.request('GET', `/api/v1/changes?since=${since}&limit=1000`)).body;
    since = page.next;
    if (!page.hasMore) return since;
  }
}

async function byTitle(s: TestServer, title: string) {
  const list = await s.request(
    'GET',
    `/api/v1/portfolio?filter=${encodeURIComponent(`projectTitle:${title}`)}&field=portfolioId`,
  );
  expect(list.body.total, title).toBe(1);
  return (await s.request('GET', `/api/v1/portfolio/${list.body.lists[0].portfolioId}`)).body;
}

const HEADER = 'Member barcode,Category,Project title,Project detail,Tags';

describe('CSV import', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it('reads quotes, embedded line breaks, a BOM, ";" separators and accents', async () => {
    const csv =
      '\uFEFFMember barcode;category;PROJECT TITLE;Project detail;Tags;Notes\r\n' +
      'Q1;Interior;"Café ""Noël""";"Two lines:\nsecond; with a semicolon";"wood ; glass";ignored\r\n' +
      'Q2;Interior;Crème brûlée;Plain;;x\r\n';
    const answer = await importCsv(s, csv);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.counts).toEqual({ create: 2, update: 0, unchanged: 0, refused: 0 });
    expect(answer.body.ignoredColumns).toEqual(['Notes']);
    expect(answer.body.rows.map((row: { row: number }) => row.row)).toEqual([1, 2]);
    const cafe = await byTitle(s, 'Café "Noël"');
    expect(cafe.projectDetail).toBe('Two lines:\nsecond; with a semicolon');
    expect(cafe.generalTag).toEqual(['wood', 'glass']);
    expect(cafe.portfolioId).toBe(answer.body.rows[0].portfolioId);
    expect((await byTitle(s, 'Crème brûlée')).generalTag).toEqual([]);
  });

  it('a dry run reports each row and changes nothing; the real run applies good rows, refuses the rest; a retry never duplicates', async () => {
    const editor = await s.userSession('csv-editor', 'editor', ['Interior']);
    const existing = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ memberBarcode: 'E1', projectTitle: 'Old house' }),
    });
    const csv =
      `${HEADER}\n` +
      'E1,Interior,Old house,A new detail,roof\n' + // update by barcode + title
      'E2,Interior,New house,Detail,\n' + // create
      'E3,Interior,,Detail,\n' + // refused: no title
      'E4,Garden,Shed,Detail,\n' + // refused: category not allowed
      'bad barcode!,Interior,Hut,Detail,\n'; // refused: barcode pattern
    const [totalBefore, seqBefore] = [await total(s), await lastSeq(s)];
    const dry = await importCsv(s, csv, 'dryRun=true', editor);
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.dryRun).toBe(true);
    expect(dry.body.rows.map((row: { action: string }) => row.action)).toEqual([
      'update',
      'create',
      'refused',
      'refused',
      'refused',
    ]);
    expect(dry.body.rows[0].portfolioId).toBe(existing.body.portfolioId);
    expect(dry.body.rows[2].errors).toEqual([
      { field: 'projectTitle', message: expect.stringMatching(/project title/i) },
    ]);
    expect(dry.body.rows[3].errors[0].message).toMatch(/category "Garden"/);
    expect(dry.body.rows[4].errors[0]).toEqual({
      field: 'memberBarcode',
      message: expect.stringMatching(/letters, digits/),
    });
    expect([await total(s), await lastSeq(s)]).toEqual([totalBefore, seqBefore]);

    const real = await importCsv(s, csv, 'dryRun=false', editor);
    expect(real.body.rows).toEqual(
      dry.body.rows.map((row: object, i: number) =>
        i === 1 ? { ...row, portfolioId: expect.any(String) } : row,
      ),
    );
    expect(real.body.counts).toEqual({ create: 1, update: 1, unchanged: 0, refused: 3 });
    expect(await total(s)).toBe(totalBefore + 1);
    const updated = await s.request('GET', `/api/v1/portfolio/${existing.body.portfolioId}`);
    expect(updated.body).toMatchObject({ projectDetail: 'A new detail', revision: 2 });
    expect(updated.body.generalTag).toEqual(['roof']);

    const seqAfter = await lastSeq(s);
    const again = await importCsv(s, csv, '', editor);
    expect(again.body.counts).toEqual({ create: 0, update: 0, unchanged: 2, refused: 3 });
    expect([await total(s), await lastSeq(s)]).toEqual([totalBefore + 1, seqAfter]);
  });

  it('matches by portfolioId, creates with the row’s own id, and an admin sets admin-only fields', async () => {
    const csv =
      'portfolioId,memberBarcode,category,projectTitle,projectDetail,staffPick,certificateByOrg\n' +
      'csv-id-1,K1,Interior,Kiosk,Detail,yes,Gold; Silver\n' +
      'csv-id-1,K1,Interior,Kiosk,Changed,yes,Gold; Silver\n';
    const first = await importCsv(s, csv);
    expect(first.body.rows.map((row: { action: string }) => row.action)).toEqual([
      'create',
      'update',
    ]);
    const made = await s.request('GET', '/api/v1/portfolio/csv-id-1');
    expect(made.body).toMatchObject({
      staffPick: true,
      certificateByOrg: ['Gold', 'Silver'],
      projectDetail: 'Changed',
      revision: 3,
    });
    const editor = await s.userSession('csv-editor-2', 'editor', ['*']);
    const refused = await importCsv(
      s,
      csv,
      `mapping=${encodeURIComponent(JSON.stringify({ staffPick: 'staffPick', portfolioId: 'portfolioId' }))}`,
      editor,
    );
    expectError(refused, 403, 'FORBIDDEN_FIELD');
  });

  it('refuses a bad mapping, a file that is not CSV, an empty file and an over-long row, with nothing written', async () => {
    const before = await total(s);
    const unknown = expectError(
      await importCsv(
        s,
        `${HEADER}\nA,B,C,D,E\n`,
        `mapping=${encodeURIComponent('{"Title":"projectTitel"}')}`,
      ),
      400,
      'INVALID_QUERY',
    );
    expect(unknown.message).toContain('"projectTitel"');
    expect(unknown.message).toContain('not a field');
    const files = expectError(
      await importCsv(s, `${HEADER}\n`, `mapping=${encodeURIComponent('{"Pic":"cover"}')}`),
      400,
      'INVALID_QUERY',
    );
    expect(files.message).toMatch(/files are not set from a CSV/);
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    const notCsv = await importCsv(s, png);
    expect(expectError(notCsv, 400, 'INVALID_CSV').message).toMatch(/not CSV text/);
    expect(expectError(await importCsv(s, ''), 400, 'INVALID_CSV').message).toMatch(/empty/);
    expect(
      expectError(await importCsv(s, 'just some words\nand more\n'), 400, 'INVALID_CSV').message,
    ).toMatch(/No column/);
    const longRow = `${HEADER}\nL1,Interior,Long,Detail,x\nL2,Interior,"${'x'.repeat(1_100_000)}`;
    const tooLong = expectError(await importCsv(s, longRow), 413, 'CSV_ROW_TOO_LARGE');
    expect(tooLong.message).toMatch(/longer than 1,000,000 characters/);
    const open = expectError(
      await importCsv(s, `${HEADER}\nO1,Interior,"Open,D,x\n`),
      400,
      'INVALID_CSV',
    );
    expect(open.message).toMatch(/never closed/);
    expect(await total(s)).toBe(before);
  });

  it('is for editors and admins only: a viewer gets 403 before anything is read', async () => {
    const viewer = await s.userSession('csv-viewer', 'viewer');
    const answer = await importCsv(s, 'not even read', 'mapping=%7Bbroken', viewer);
    expectError(answer, 403, 'FORBIDDEN');
    expectError(await importCsv(s, HEADER, '', null), 401, 'UNAUTHORIZED');
  });

  // PostgreSQL commits each portfolio in its own transaction: fewer rows keep that run quick.
  const BULK = TEST_BACKEND === 'postgres' ? 2_000 : 10_000;

  it(`imports ${BULK} rows, then judges them all unchanged`, async () => {
    const lines = [HEADER];
    for (let i = 0; i < BULK; i++) lines.push(`B${i},Bulk,Bulk ${i},Detail ${i},a;b`);
    const csv = `${lines.join('\n')}\n`;
    const before = await total(s);
    const first = await importCsv(s, csv);
    expect(first.body.counts).toEqual({ create: BULK, update: 0, unchanged: 0, refused: 0 });
    expect(await total(s)).toBe(before + BULK);
    const second = await importCsv(s, csv, 'dryRun=true');
    expect(second.body.counts).toEqual({ create: 0, update: 0, unchanged: BULK, refused: 0 });
  }, 180_000);
});
