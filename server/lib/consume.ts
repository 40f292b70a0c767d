import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';

/** Large chunks (a decoded JSON upload is one) are taken in pieces, so waiting applies to each. */
const PIECE_BYTES = 1024 * 1024;

/**
 * Passes each chunk of `source` to `take`, waiting whenever `take` returns a promise, and
 * resolves once every chunk is taken, the last one included. A stream is read with 'data'
 * events rather than an async iterator: that would join the chunks waiting in the stream into
 * one new buffer on every read, copying most of an upload once more. The stream is destroyed if
 * `take` fails or `stop` is aborted, and the failure (or the abort's reason) is thrown.
 */
export async function consume(
  source: Readable | Iterable<Uint8Array>,
  stop: AbortSignal,
  take: (chunk: Uint8Array) => Promise<unknown> | undefined,
): Promise<void> {
  if (!(source instanceof Readable)) {
    for (const chunk of source) {
      for (let offset = 0; offset < chunk.byteLength; offset += PIECE_BYTES) {
        await take(chunk.subarray(offset, offset + PIECE_BYTES));
        stop.throwIfAborted();
      }
    }
    return;
  }
  let failed: { error: unknown } | undefined;
  /** The last `take` still running: a paused stream may end before it is done. */
  let taking: Promise<void> | undefined;
  const fail = (error: unknown) => {
    if (failed) return;
    failed = { error };
    source.off('data', onData);
    source.destroy();
  };
  const onData = (chunk: Uint8Array) => {
    try {
      const waiting = take(chunk);
      if (!waiting) return;
      source.pause();
      const current: Promise<void> = waiting
        .then(() => source.resume(), fail)
        .then(() => {
          if (taking === current) taking = undefined;
        });
      taking = current;
    } catch (error) {
      fail(error);
    }
  };
  const onStop = () => fail(stop.reason);
  stop.addEventListener('abort', onStop, { once: true });
  source.on('data', onData);
  try {
    await finished(source); // also fails when the client goes away before the end
    // 'end' comes as soon as nothing is left to read, even while the last `take` is running.
    while (taking) await taking;
  } catch (error) {
    throw failed ? failed.error : error;
  } finally {
    stop.removeEventListener('abort', onStop);
  }
  if (failed) throw failed.error;
  stop.throwIfAborted(); // refused after the last byte came in
}
