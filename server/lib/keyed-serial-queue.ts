import { SerialQueue } from './serial-queue';

/**
 * One SerialQueue per key: tasks of one key run one at a time, tasks of different keys run
 * side by side. A key's queue lives only while it has tasks, so the map never outgrows the keys
 * in use.
 */
export class KeyedSerialQueue {
  private readonly queues = new Map<string, { queue: SerialQueue; pending: number }>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    let entry = this.queues.get(key);
    if (!entry) {
      entry = { queue: new SerialQueue(), pending: 0 };
      this.queues.set(key, entry);
    }
    entry.pending++;
    try {
      return await entry.queue.run(task);
    } finally {
      if (--entry.pending === 0) this.queues.delete(key);
    }
  }

  /** How many keys have tasks queued or running (tests). */
  get size(): number {
    return this.queues.size;
  }
}
