import type { WindowBounds } from './settings-store';

export const DEFAULT_SIZE = { width: 1280, height: 840 };
export const MIN_SIZE = { width: 720, height: 480 };

type Rectangle = WindowBounds;

const area = (r: Rectangle | undefined) => (r ? r.width * r.height : 0);

function overlap(a: Rectangle, b: Rectangle): number {
  const width = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const height = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return width > 0 && height > 0 ? width * height : 0;
}

/**
 * Where to open the window: the saved bounds when enough of them is on a screen that exists
 * now (a monitor may have been unplugged since), else the default size, centred by Electron.
 * Saved sizes are clamped to the display they are on.
 */
export function initialBounds(
  saved: WindowBounds | null,
  workAreas: readonly Rectangle[],
): Partial<WindowBounds> & { width: number; height: number } {
  if (!saved) return { ...DEFAULT_SIZE };
  const best = workAreas
    .map((area) => ({ area, shared: overlap(saved, area) }))
    .sort((a, b) => b.shared - a.shared)[0];
  // A sliver on screen is not enough to grab the title bar: ask for a quarter of the window
  // (or of the screen, for a window saved larger than the screen it is on now).
  const needed = Math.min(saved.width * saved.height, area(best?.area)) / 4;
  if (!best || best.shared === 0 || best.shared < needed) return { ...DEFAULT_SIZE };
  const width = Math.max(MIN_SIZE.width, Math.min(saved.width, best.area.width));
  const height = Math.max(MIN_SIZE.height, Math.min(saved.height, best.area.height));
  return { x: Math.round(saved.x), y: Math.round(saved.y), width, height };
}
