import { createHash } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { CSV_COLUMNS, EXPORT_FORMAT_VERSION, type ExportManifest } from '../../shared';
import { blobsOf, csvRow, exportedPortfolio } from '../domain/portfolio-transfer';
import type { RevisionEntry, StoredPortfolio } from '../repositories/portfolio-repository-contract';
import { loadYazl } from './zip-writer';

/** What an export reads: the chosen portfolios page by page, their history, and blobs. */
export interface ExportSource {
  /** The portfolios to export, in the list's order, one page at a time. */
  pages(): AsyncIterable<StoredPortfolio[]>;
  /** The kept revisions of one portfolio (none for a caller who may not see history). */
  history(portfolioId: string): Promise<RevisionEntry[]>;
  /** Whether the blob store has a blob, and its bytes. */
  hasBlob(sha256: string): Promise<boolean>;
  blob(sha256: string): Readable;
  libraryId: string;
  productVersion: string;
  now: number;
}

/**
 * Entries queued in the ZIP writer ahead of the one it writes. The writer keeps a queued entry's
 * bytes until its turn, so the producer waits for room: memory stays a few portfolio files and
 * the stream buffers, whatever the size of the export.
 */
const QUEUED_ENTRIES = 2;

/**
 * The export ZIP (DESIGN §11) as a stream: `portfolios/<id>.json` for each portfolio with its
 * history, `files/<sha256>` once for each blob any of them refers to, and `manifest.json` last,
 * when the counts and the sha256 of every other entry are known. An error while producing ends
 * the stream with that error (the ZIP is then cut short, and an import refuses it).
 */
export function zipExport(source: ExportSource): Readable {
  const zip = new (loadYazl().ZipFile)();
  const out = new PassThrough();
  zip.outputStream.on('error', (error) => out.destroy(error));
  zip.outputStream.pipe(out);
  let queued = 0;
  let wake: (() => void) | undefined;
  const add = (name: string, open: () => Readable, compress: boolean) => {
    queued++;
    zip.addReadStreamLazy(name, { compress, mtime: new Date(source.now) }, (callback) => {
      queued--;
      wake?.();
      callback(null, open());
    });
  };
  const room = async () => {
    while (queued >= QUEUED_ENTRIES && !out.destroyed) {
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  const produce = async () => {
    const files: Record<string, string> = {};
    const added = new Set<string>();
    let portfolios = 0;
    let revisions = 0;
    let seq = 0;
    for await (const page of source.pages()) {
      for (const record of page) {
        if (out.destroyed) return;
        const history = await source.history(record.portfolioId);
        const json = Buffer.from(JSON.stringify(exportedPortfolio(record, history), null, 1));
        const name = `portfolios/${record.portfolioId}.json`;
        files[name] = sha256Of(json);
        await room();
        add(name, () => Readable.from([json]), true);
        portfolios++;
        revisions += history.length;
        seq = Math.max(seq, record.seq);
        for (const sha256 of blobsOf(record, history)) {
          if (added.has(sha256) || !(await source.hasBlob(sha256))) continue;
          added.add(sha256);
          files[`files/${sha256}`] = sha256;
          await room();
          // Images and documents are compressed already: stored as they are.
          add(`files/${sha256}`, () => source.blob(sha256), false);
        }
      }
    }
    const manifest: ExportManifest = {
      formatVersion: EXPORT_FORMAT_VERSION,
      productVersion: source.productVersion,
      libraryId: source.libraryId,
      seq,
      createdTime: source.now,
      counts: { portfolios, revisions, files: added.size },
      files,
    };
    zip.addBuffer(Buffer.from(JSON.stringify(manifest, null, 1)), 'manifest.json', {
      mtime: new Date(source.now),
    });
    zip.end();
  };
  produce().catch((error: unknown) => out.destroy(error as Error));
  return out;
}

/**
 * The CSV export (DESIGN §11) as a stream: UTF-8 with a BOM (spreadsheets then read it as
 * UTF-8), a header row, RFC 4180 quoting, one row per portfolio; arrays joined with `; ` and a
 * cell that would start a formula prefixed with `'` (see csvRow).
 */
export function csvExport(pages: AsyncIterable<StoredPortfolio[]>): Readable {
  const csv = stringify({
    bom: true,
    header: true,
    columns: [...CSV_COLUMNS],
    record_delimiter: 'windows',
  });
  const rows = async function* () {
    for await (const page of pages) for (const record of page) yield csvRow(record);
  };
  const source = Readable.from(rows());
  // pipe() does not pass an error on: a failed read ends the CSV with it, not silently short.
  source.on('error', (error) => csv.destroy(error));
  return source.pipe(csv);
}

function sha256Of(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
