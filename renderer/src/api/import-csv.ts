import type { CsvKey } from '../../../shared';
import { postFile, type ImportHandle } from './import-zip';
import type { paths } from './openapi';

/** What `POST /api/v1/import/csv` answers: what each row did (or would do). */
export type CsvImportReport =
  paths['/api/v1/import/csv']['post']['responses'][200]['content']['application/json'];

export interface CsvImportOptions {
  dryRun: boolean;
  /** Column header → field. */
  mapping: Record<string, string>;
  key: CsvKey;
}

/** Sends a CSV to the CSV import, with the mapping and key chosen on the Import page. */
export function importCsv(
  file: File,
  options: CsvImportOptions,
  onProgress: (fraction: number) => void,
): ImportHandle<CsvImportReport> {
  const query = new URLSearchParams({
    dryRun: String(options.dryRun),
    mapping: JSON.stringify(options.mapping),
    key: options.key,
  });
  return postFile<CsvImportReport>(`/api/v1/import/csv?${query}`, file, 'text/csv', onProgress);
}
