/**
 * Several server instances on one database, each with its own pool and repository: the
 * compare-and-set and the change sequence hold across them, not only within one process.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import {
  PortfolioIdTakenError,
  RevisionConflictError,
  type Change,
  type ChangeMeta,
  type StoredPortfolio,
} from '../../../server/repositories/portfolio-repository-contract';
import { openDatabase, type Database } from '../../../server/storage/postgres/database';
import { PgPortfolioRepository } from '../../../server/storage/postgres/pg-portfolio-repository';
import { sharedSetting } from '../../../server/storage/postgres/settings';
import { portfolioRecord } from '../../helpers/portfolio-record';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../../helpers/postgres';

const SUITE = 'PostgreSQL: several instances on one database';
const unavailable = await postgresUnavailable(SUITE);

const meta = (by: string, command = 'create'): ChangeMeta => ({
  by,
  time: Date.now(),
  command,
  changedFields: [],
});

const record = (portfolioId: string) => portfolioRecord(portfolioId, { createdTime: 1 });

describe.skipIf(unavailable)(SUITE, () => {
  let testDatabase: TestDatabase;
  const databases: Database[] = [];
  afterEach(async () => {
    await Promise.all(databases.splice(0).map((database) => database.close()));
    await testDatabase?.drop();
  });

  /** Two instances, as two server processes would have them: a pool and a repository each. */
  async function twoInstances(): Promise<[PgPortfolioRepository, PgPortfolioRepository]> {
    testDatabase = await createTestDatabase();
    for (let n = 0; n < 2; n++) databases.push(await openDatabase(testDatabase.url));
    return [
      await PgPortfolioRepository.open(databases[0]!.pool),
      await PgPortfolioRepository.open(databases[1]!.pool),
    ];
  }

  it('lets exactly one of 20 concurrent updates from one base win, split across both', async () => {
    const [a, b] = await twoInstances();
    expect(a.libraryId).toBe(b.libraryId);
    const base = await a.insert(record('p1'), meta('ann'));
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, n) =>
        (n % 2 === 0 ? a : b).update(
          'p1',
          base.revision,
          { ...base, projectTitle: `writer ${n}`, revision: base.revision + 1 },
          meta(`w${n}`, 'save'),
        ),
      ),
    );
    const won = results.filter((result) => result.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const result of results.filter((result) => result.status === 'rejected'))
      expect(result.reason).toBeInstanceOf(RevisionConflictError);
    const winner = (won[0] as PromiseFulfilledResult<StoredPortfolio>).value;
    expect(await b.get('p1')).toEqual(winner);
    expect((await a.revisions('p1', 100, null)).total).toBe(2);
  });

  it('gives every change of both one seq, without gaps, and a feed reader misses none', async () => {
    const [a, b] = await twoInstances();
    const seen = new Map<string, number>();
    let since = 0;
    let writing = true;
    // Reads the feed on its own while both instances write: whatever it has passed must stay
    // passed, so a change committed later with a lower seq would be missed for good.
    const reader = (async () => {
      while (writing) {
        const page = await a.changesSince(since, 7);
        for (const change of page.changes as Change[]) seen.set(change.portfolioId, change.seq);
        since = page.next;
      }
    })();
    const created = await Promise.all(
      Array.from({ length: 60 }, (_, n) =>
        (n % 2 === 0 ? a : b).insert(record(`p${n}`), meta(n % 2 === 0 ? 'ann' : 'bob')),
      ),
    );
    writing = false;
    await reader;
    for (;;) {
      const page = await b.changesSince(since, 100);
      for (const change of page.changes) seen.set(change.portfolioId, change.seq);
      since = page.next;
      if (!page.hasMore) break;
    }
    const seqs = created.map((stored) => stored.seq).sort((x, y) => x - y);
    expect(seqs).toEqual(Array.from({ length: 60 }, (_, n) => n + 1));
    expect(seen.size).toBe(60);
    for (const stored of created) expect(seen.get(stored.portfolioId)).toBe(stored.seq);
  });

  it('holds a later change until the one in flight ends, then gives it the next seq', async () => {
    const [a] = await twoInstances();
    await a.insert(record('first'), meta('ann'));
    // Another instance's change in flight: it has taken seq 2 and not committed yet.
    const inFlight = new pg.Client({ connectionString: testDatabase.url });
    await inFlight.connect();
    await inFlight.query('BEGIN');
    await inFlight.query('UPDATE library SET seq = seq + 1');
    const later = a.insert(record('later'), meta('bob'));
    // The later change waits for the library row instead of committing seq 3 before seq 2.
    await expect
      .poll(async () => {
        const { rows } = await inFlight.query<{ waiting: number }>(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return rows[0]!.waiting;
      })
      .toBe(1);
    expect(await a.get('later')).toBeUndefined();
    // The change in flight fails: its seq is given to the next change, leaving no gap.
    await inFlight.query('ROLLBACK');
    await inFlight.end();
    expect((await later).seq).toBe(2);
  });

  it('commits a burst of changes together: one refused leaves the others, and its seq', async () => {
    const [a] = await twoInstances();
    await a.insert(record('taken'), meta('ann'));
    const ids = ['n1', 'n2', 'taken', 'n3', 'taken', 'n4'];
    const results = await Promise.allSettled(ids.map((id) => a.insert(record(id), meta('bob'))));
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    for (const result of results.filter((result) => result.status === 'rejected'))
      expect(result.reason).toBeInstanceOf(PortfolioIdTakenError);
    const seqs = results.flatMap((result) =>
      result.status === 'fulfilled' ? [(result.value as StoredPortfolio).seq] : [],
    );
    expect(seqs).toEqual([2, 3, 4, 5]);
    expect((await a.get('taken'))?.createdBy).toBe('ann');
    const feed = await a.changesSince(0, 100);
    expect(feed.changes.map((change) => change.portfolioId)).toEqual([
      'taken',
      'n1',
      'n2',
      'n3',
      'n4',
    ]);
  });

  it('shares one setting among instances starting together, whoever made it first', async () => {
    await twoInstances();
    let made = 0;
    const create = () => ({ secret: `secret ${++made}` });
    const answers = await Promise.all(
      [...databases, ...databases].map((database) =>
        sharedSetting(database.pool, 'pageTokenSecret', create),
      ),
    );
    expect(new Set(answers.map((answer) => answer.secret)).size).toBe(1);
    expect(await sharedSetting(databases[1]!.pool, 'pageTokenSecret', create)).toEqual(answers[0]);
  });
});
