import { isAbsolute, join, resolve } from 'node:path';

/**
 * The data directory: `<userData>/data`, or PORTFOLIO_DATA_DIR when set (the same variable the
 * headless server reads, so both can be pointed at one folder; the data-dir lock keeps them
 * from opening it at the same time).
 */
export function resolveDataDir(env: NodeJS.ProcessEnv, userDataDir: string): string {
  const override = env.PORTFOLIO_DATA_DIR?.trim();
  if (override) return isAbsolute(override) ? override : resolve(override);
  return join(userDataDir, 'data');
}
