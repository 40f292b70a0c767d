import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveDataDir } from '../../electron/main/data-dir';
import { devApiPort } from '../../electron/main/dev-server';
import { startupErrorDialog } from '../../electron/main/startup-errors';
import { makeTempDir } from '../helpers/test-server';
import { buildDesktopApp } from './helpers';

describe('data directory', () => {
  it('lives under userData by default', () => {
    expect(resolveDataDir({}, '/home/ann/.config/Portfolio Manager')).toBe(
      join('/home/ann/.config/Portfolio Manager', 'data'),
    );
  });

  it('follows PORTFOLIO_DATA_DIR, like the headless server', () => {
    expect(resolveDataDir({ PORTFOLIO_DATA_DIR: '/srv/portfolio' }, '/u')).toBe('/srv/portfolio');
    expect(resolveDataDir({ PORTFOLIO_DATA_DIR: 'rel/dir' }, '/u')).toBe(resolve('rel/dir'));
    expect(resolveDataDir({ PORTFOLIO_DATA_DIR: '  ' }, '/u')).toBe(join('/u', 'data'));
  });

  it('uses a known API port under electron-vite dev', () => {
    expect(devApiPort({})).toBe(17321);
    expect(devApiPort({ PORTFOLIO_DEV_API_PORT: '18000' })).toBe(18000);
    expect(devApiPort({ PORTFOLIO_DEV_API_PORT: 'x' })).toBe(17321);
  });
});

describe('start-up errors', () => {
  let dataDir: string | null = null;
  afterEach(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('explains a data folder held by another process (e.g. a headless server)', async () => {
    dataDir = await makeTempDir('portfolio-inuse-');
    const first = await buildDesktopApp(dataDir);
    try {
      const error = await buildDesktopApp(dataDir).catch((e: unknown) => e);
      const dialog = startupErrorDialog(error, dataDir);
      expect(dialog.title).toBe('Data folder in use');
      expect(dialog.message).toContain(dataDir);
      expect(dialog.message).toContain(`pid ${process.pid}`);
      expect(dialog.message).toContain('PORTFOLIO_DATA_DIR');
    } finally {
      await first.close();
    }
  });

  it('names the folder and the cause for any other failure', () => {
    const dialog = startupErrorDialog(new Error('EACCES: permission denied'), '/data');
    expect(dialog.title).toBe('Portfolio Manager could not start');
    expect(dialog.message).toContain('/data');
    expect(dialog.message).toContain('EACCES');
  });
});
