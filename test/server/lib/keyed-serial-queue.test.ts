import { describe, expect, it } from 'vitest';
import { KeyedSerialQueue } from '../../../server/lib/keyed-serial-queue';

describe('KeyedSerialQueue', () => {
  it('runs one key one task at a time, other keys alongside, and forgets idle keys', async () => {
    const queue = new KeyedSerialQueue();
    const order: string[] = [];
    const task =
      (name: string, fail = false) =>
      async () => {
        order.push(`start ${name}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        order.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([
      queue.run('a', task('a1', true)),
      queue.run('a', task('a2')),
      queue.run('b', task('b1')),
    ]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(order.indexOf('start a2')).toBeGreaterThan(order.indexOf('end a1'));
    expect(order.indexOf('start b1')).toBeLessThan(order.indexOf('end a1'));
    expect(queue.size).toBe(0);
  });
});
