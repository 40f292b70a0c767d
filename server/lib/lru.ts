/** A map that forgets its least recently used entry once it holds more than `limit`. */
export class Lru<V> extends Map<string, V> {
  constructor(
    private readonly limit: number,
    /** Told of every entry forgotten to stay within the limit. */
    private readonly onEvict?: (key: string, value: V) => void,
  ) {
    super();
  }

  use(key: string): V | undefined {
    const value = super.get(key);
    if (value !== undefined) {
      super.delete(key);
      super.set(key, value);
    }
    return value;
  }

  put(key: string, value: V): void {
    super.delete(key);
    super.set(key, value);
    if (this.size > this.limit) {
      const [oldest, forgotten] = this.entries().next().value!;
      super.delete(oldest);
      this.onEvict?.(oldest, forgotten);
    }
  }
}
