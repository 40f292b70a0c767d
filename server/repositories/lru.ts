/** A map that forgets its least recently used entry once it holds more than `limit`. */
export class Lru<V> extends Map<string, V> {
  constructor(private readonly limit: number) {
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
    if (this.size > this.limit) super.delete(this.keys().next().value!);
  }
}
