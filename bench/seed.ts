import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { PortfolioRecord } from '../shared';
import type { StoredPortfolio } from '../server/repositories/portfolio-repository-contract';
import { EmbeddedPortfolioRepository } from '../server/storage/embedded/embedded-portfolio-repository';
import { importPostgres } from '../server/storage/library-transfer';
import { openDatabase } from '../server/storage/postgres/database';
import { Store } from '../server/storage/embedded/store';

export const CATEGORIES = [
  'Interior',
  'Architecture',
  'Fashion',
  'Jewelry',
  'Graphic',
  'Product',
  'Furniture',
  'Textile',
  'Ceramics',
  'Photography',
];
export const WORDS = [
  'lake',
  'house',
  'garden',
  'studio',
  'loft',
  'chair',
  'ring',
  'poster',
  'vase',
  'coat',
];

/** A small deterministic generator, so every run and every server sees the same data. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

export function makePortfolios(size: number): PortfolioRecord[] {
  const next = random(42);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const start = Date.UTC(2020, 0, 1);
  return Array.from({ length: size }, (_, index) => {
    const time = start + index * 60_000 + Math.floor(next() * 1000);
    const title = `${pick(WORDS)} ${pick(WORDS)} ${index}`;
    return {
      portfolioId: `p${String(index).padStart(7, '0')}`,
      memberBarcode: `M${String(Math.floor(next() * Math.max(1, size / 10))).padStart(6, '0')}`,
      category: CATEGORIES[index % CATEGORIES.length]!,
      relativeCategory: [pick(CATEGORIES), pick(CATEGORIES)],
      projectTitle: title[0]!.toUpperCase() + title.slice(1),
      aboutProject: `About ${title}. `.repeat(4),
      projectDetail: `Details of ${title}: materials, process and outcome. `.repeat(5),
      projectLanuching: '2024',
      readyToBuy: next() < 0.3 ? 'yes' : 'no',
      occasion: [pick(['wedding', 'daily', 'office'])],
      referenceStyling: [pick(['modern', 'classic', 'minimal'])],
      generalTag: [pick(WORDS), pick(WORDS)],
      certificateByOrg: next() < 0.1 ? ['Gold'] : [],
      certificateDesc: '',
      staffPick: next() < 0.05,
      cover: null,
      draftingProcess: [],
      additionalDocument: [],
      createdTime: time,
      modifiedTime: time,
      published: next() < 0.8,
      active: next() < 0.95,
      revision: 1,
    };
  });
}

/**
 * Writes the portfolios through the repository (each one a create, as the server would have
 * made it: seq, author, first revision), then one snapshot. No automatic snapshots while
 * seeding; creates go in concurrent batches, so they share journal writes.
 */
export async function seedDataDir(dataDir: string, records: PortfolioRecord[]): Promise<void> {
  const store = await Store.open({ dataDir, compactMinBytes: Number.MAX_SAFE_INTEGER });
  try {
    const repository = await EmbeddedPortfolioRepository.open(store);
    for (let start = 0; start < records.length; start += 1000) {
      await Promise.all(
        records.slice(start, start + 1000).map((record) =>
          repository.insert(record, {
            by: 'bench',
            time: record.createdTime,
            command: 'create',
            changedFields: [],
          }),
        ),
      );
    }
    await store.compactNow();
  } finally {
    await store.close();
  }
}

/**
 * Puts `records` straight into the store's portfolios collection, 5000 to a commit: the records
 * alone, without history, for the benches that measure the list index in process.
 */
export async function putRecords(store: Store, records: readonly PortfolioRecord[]): Promise<void> {
  for (let start = 0; start < records.length; start += 5000)
    await store.commit(
      records.slice(start, start + 5000).map((record) => ({
        type: 'put' as const,
        col: 'portfolios',
        key: record.portfolioId,
        value: record,
      })),
    );
}

/** json-server's whole database: one JSON file, rewritten on every change. */
export async function seedJsonServer(file: string, records: PortfolioRecord[]): Promise<void> {
  await writeFile(file, JSON.stringify({ portfolios: records }));
}

/**
 * Writes the portfolios into a migrated PostgreSQL database as the same creates would have left
 * them (seq in order, author, first revision), through the bulk import of `storage migrate`:
 * many rows per statement, one transaction.
 */
export async function seedPostgres(url: string, records: PortfolioRecord[]): Promise<void> {
  const database = await openDatabase(url);
  try {
    const portfolios: StoredPortfolio[] = records.map((record, index) => ({
      ...record,
      seq: index + 1,
      createdBy: 'bench',
      modifiedBy: 'bench',
    }));
    await importPostgres(database.pool, {
      library: { libraryId: randomUUID(), seq: portfolios.length, horizon: 0 },
      portfolios,
      revisions: portfolios.map((stored) => ({
        portfolioId: stored.portfolioId,
        revision: stored.revision,
        seq: stored.seq,
        modifiedTime: stored.modifiedTime,
        modifiedBy: 'bench',
        command: 'create',
        changedFields: [],
        snapshot: stored,
      })),
      trash: [],
      tombstones: [],
      users: [],
    });
    await database.pool.query('VACUUM ANALYZE');
  } finally {
    await database.close();
  }
}
