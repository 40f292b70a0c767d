/**
 * Runs tasks one at a time, in the order they were handed in. A task starts once the one before
 * it has settled, whether it resolved or rejected: a failure is reported to that task's caller
 * only and never stops the tasks queued behind it.
 */
export class SerialQueue {
  /** The last task queued, settled either way; it never rejects. */
  private tail: Promise<void> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.then(settled, settled);
    return result;
  }

  /** Resolves once no task is queued or running, including tasks queued while waiting. */
  async idle(): Promise<void> {
    let tail: Promise<void>;
    do {
      tail = this.tail;
      await tail;
    } while (tail !== this.tail);
  }
}

function settled(): void {}
