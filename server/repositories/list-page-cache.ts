/**
 * Serialized list answers, reused until the next change to any portfolio.
 *
 * A gallery is read far more often than it is written, and most readers ask for the same few
 * pages (the first page of a category, the staff picks). Each entry is keyed by the caller's
 * visibility and the request's exact query string and stamped with the index version it was built
 * from; any create, update, delete or file change bumps that version, so an entry is served only
 * while nothing has changed since it was made. Entries are bounded by count and by bytes, and an
 * answer larger than a quarter of the budget (a page with cover data) is never kept.
 */
export class ListPageCache {
  private readonly entries = new Map<string, { version: number; body: Buffer }>();
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly maxEntries = 512,
  ) {}

  get(key: string, version: number): Buffer | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.version !== version) {
      this.drop(key, entry.body);
      return undefined;
    }
    // Most recently used last: delete + set moves it to the end of the Map's order.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.body;
  }

  put(key: string, version: number, body: Buffer): void {
    const size = sizeOf(key, body);
    if (size > this.maxBytes / 4) return;
    const old = this.entries.get(key);
    if (old) this.drop(key, old.body);
    this.entries.set(key, { version, body });
    this.bytes += size;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes && this.entries.size <= this.maxEntries) break;
      this.drop(oldest, entry.body);
    }
  }

  private drop(key: string, body: Buffer): void {
    this.entries.delete(key);
    this.bytes -= sizeOf(key, body);
  }
}

/** The body's bytes, and two bytes a UTF-16 code unit of the key (the most V8 spends). */
const sizeOf = (key: string, body: Buffer) => key.length * 2 + body.length;
