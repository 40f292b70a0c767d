import { describe, expect, it } from 'vitest';
import { SerialQueue } from '../../../server/lib/serial-queue';

/** A promise settled from outside, to hold a task open for as long as a test needs. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Lets every already-settled promise callback run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SerialQueue', () => {
  it('runs tasks one at a time, in the order they were handed in', async () => {
    const queue = new SerialQueue();
    const events: string[] = [];
    let running = 0;
    const task = (name: string, delayMs: number) => async () => {
      running += 1;
      expect(running).toBe(1);
      events.push(`start ${name}`);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      events.push(`end ${name}`);
      running -= 1;
      return name;
    };
    const results = await Promise.all([
      queue.run(task('a', 20)),
      queue.run(task('b', 1)),
      queue.run(task('c', 5)),
    ]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(events).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('does not start a task before the one ahead of it has settled', async () => {
    const queue = new SerialQueue();
    const first = gate();
    let secondStarted = false;
    void queue.run(() => first.promise);
    const second = queue.run(async () => {
      secondStarted = true;
    });
    await settle();
    expect(secondStarted).toBe(false);
    first.open();
    await second;
    expect(secondStarted).toBe(true);
  });

  it("reports a failure to that task's caller only, and goes on with the next", async () => {
    const queue = new SerialQueue();
    const failing = queue.run(async () => {
      throw new Error('disk full');
    });
    const throwingAtOnce = queue.run(() => {
      throw new Error('thrown before any promise');
    });
    const next = queue.run(async () => 'still runs');
    await expect(failing).rejects.toThrow('disk full');
    await expect(throwingAtOnce).rejects.toThrow('thrown before any promise');
    await expect(next).resolves.toBe('still runs');
  });

  it('is idle once every task queued so far has settled, including those queued meanwhile', async () => {
    const queue = new SerialQueue();
    await queue.idle(); // an empty queue is idle at once

    const first = gate();
    const late = gate();
    const done: string[] = [];
    void queue.run(async () => {
      await first.promise;
      done.push('first');
      // Queued while `idle` below is already waiting: it must wait for this one too.
      void queue.run(async () => {
        await late.promise;
        done.push('late');
      });
    });
    void queue
      .run(() => Promise.reject(new Error('a failure does not keep the queue busy')))
      .catch(() => {});
    let idle = false;
    const idled = queue.idle().then(() => (idle = true));
    await settle();
    expect(idle).toBe(false);
    first.open();
    await settle();
    expect(done).toEqual(['first']);
    expect(idle).toBe(false);
    late.open();
    await idled;
    expect(done).toEqual(['first', 'late']);
  });
});
