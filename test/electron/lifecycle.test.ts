import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import {
  bringToFront,
  claimSingleInstance,
  quitAfterShutdown,
} from '../../electron/main/lifecycle';

class FakeApp extends EventEmitter {
  lock = true;
  quit = vi.fn(() => {
    const event = {
      defaultPrevented: false,
      preventDefault: () => (event.defaultPrevented = true),
    };
    this.emit('will-quit', event);
    if (!event.defaultPrevented) this.quitted = true;
  });
  quitted = false;
  requestSingleInstanceLock() {
    return this.lock;
  }
}

const fakeWindow = (minimized = false) => ({
  isDestroyed: vi.fn(() => false),
  isMinimized: vi.fn(() => minimized),
  restore: vi.fn(),
  show: vi.fn(),
  focus: vi.fn(),
});

describe('single instance', () => {
  it('the first instance keeps the lock and brings its window forward on a second launch', () => {
    const app = new FakeApp();
    const onSecond = vi.fn();
    expect(claimSingleInstance(app as any, onSecond)).toBe(true);
    app.emit('second-instance', {}, ['electron', '.'], '/');
    expect(onSecond).toHaveBeenCalledTimes(1);
  });

  it('a second instance gets no lock (and the caller quits)', () => {
    const app = new FakeApp();
    app.lock = false;
    const onSecond = vi.fn();
    expect(claimSingleInstance(app as any, onSecond)).toBe(false);
    expect(app.listenerCount('second-instance')).toBe(0);
  });

  it('restores a minimised window and focuses it', () => {
    const window = fakeWindow(true);
    expect(bringToFront(window as any)).toBe(true);
    expect(window.restore).toHaveBeenCalled();
    expect(window.focus).toHaveBeenCalled();
    expect(bringToFront(null)).toBe(false);
  });
});

describe('quitting cleanly', () => {
  it('holds the quit until the shutdown (flushing writes) has finished', async () => {
    const app = new FakeApp();
    let finish!: () => void;
    const shutdown = vi.fn(() => new Promise<void>((resolve) => (finish = resolve)));
    quitAfterShutdown(app as any, shutdown, vi.fn());

    app.quit();
    expect(app.quitted).toBe(false);
    app.quit(); // a second Quit while stopping does not start another shutdown
    expect(shutdown).toHaveBeenCalledTimes(1);

    finish();
    await vi.waitFor(() => expect(app.quitted).toBe(true));
  });

  it('still quits when the shutdown fails, reporting the error', async () => {
    const app = new FakeApp();
    const onError = vi.fn();
    quitAfterShutdown(app as any, () => Promise.reject(new Error('disk gone')), onError);
    app.quit();
    await vi.waitFor(() => expect(app.quitted).toBe(true));
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: 'disk gone' }));
  });
});
