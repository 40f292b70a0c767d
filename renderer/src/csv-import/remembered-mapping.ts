import type { CsvKey } from '../../../shared';

/** A mapping chosen for one header row, kept in this browser for the next file like it. */
export interface RememberedMapping {
  mapping: Record<string, string>;
  key: CsvKey;
}

const PREFIX = 'portfolio.csvMapping.';

/** The storage key of a header row: the same columns in the same order find the same mapping. */
const storageKey = (header: readonly string[]) => PREFIX + JSON.stringify(header);

export function recallMapping(header: readonly string[]): RememberedMapping | null {
  try {
    const raw = localStorage.getItem(storageKey(header));
    if (!raw) return null;
    const parsed = JSON.parse(raw) as RememberedMapping;
    return typeof parsed?.mapping === 'object' && typeof parsed.key === 'string' ? parsed : null;
  } catch {
    return null;
  }
}

export function rememberMapping(header: readonly string[], remembered: RememberedMapping): void {
  try {
    localStorage.setItem(storageKey(header), JSON.stringify(remembered));
  } catch {
    // Storage full or disabled: the mapping is simply not remembered.
  }
}
