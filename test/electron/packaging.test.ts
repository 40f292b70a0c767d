import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { FuseV1Options, FuseVersion } from '@electron/fuses';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { fuseConfig } from '../../electron/packaging/after-pack.mjs';

const root = new URL('../../', import.meta.url);
const require = createRequire(import.meta.url);

describe('packaging', () => {
  it('electron-builder.yml is valid and packs sharp outside the asar', async () => {
    const { getConfig, validateConfiguration } = require('app-builder-lib/out/util/config/config');
    const { DebugLogger } = require('builder-util');
    const config = await getConfig(root.pathname, null, null);
    await validateConfiguration(config, new DebugLogger(false));
    expect(config.appId).toBe('org.portfoliomanager.desktop');
    expect(config.productName).toBe('Portfolio Manager');
    expect(config.asarUnpack).toEqual(
      expect.arrayContaining(['**/node_modules/sharp/**/*', '**/node_modules/@img/**/*']),
    );
    expect(config.linux.target).toEqual(['AppImage', 'deb']);
    expect(config.win.target).toEqual(['nsis']);
    expect(config.mac.target).toEqual(['dmg']);
    expect(config.afterPack).toBe('electron/packaging/after-pack.mjs');
    // What goes into the archive, by electron-builder's own file matching: the app's bundles,
    // not the headless server's (the app runs the server in its main process).
    const { FileMatcher } = require('app-builder-lib/out/fileMatcher');
    const matcher = new FileMatcher(
      root.pathname,
      '/app',
      (p: string) => p,
      config.files[0].filter,
    );
    const packs = matcher.createFilter();
    const file = { isDirectory: () => false, isFile: () => true, isSymbolicLink: () => false };
    const packed = (path: string) => packs(new URL(path, root).pathname, file);
    expect(packed('out/main/index.js')).toBe(true);
    expect(packed('out/renderer/index.html')).toBe(true);
    expect(packed('out/server/cli.js')).toBe(false);
    expect(packed('out/main/index.js.map')).toBe(false);
  });

  it('flips the fuses that lock the binary down', () => {
    for (const platform of ['linux', 'win32', 'darwin']) {
      const fuses = fuseConfig(platform);
      expect(fuses.version).toBe(FuseVersion.V1);
      expect(fuses[FuseV1Options.RunAsNode]).toBe(false);
      expect(fuses[FuseV1Options.EnableNodeOptionsEnvironmentVariable]).toBe(false);
      expect(fuses[FuseV1Options.EnableNodeCliInspectArguments]).toBe(false);
      expect(fuses[FuseV1Options.EnableEmbeddedAsarIntegrityValidation]).toBe(true);
      expect(fuses[FuseV1Options.OnlyLoadAppFromAsar]).toBe(true);
    }
    expect(fuseConfig('darwin').resetAdHocDarwinSignature).toBe(true);
  });

  it('ships a real icon set', async () => {
    for (const size of [16, 24, 32, 48, 64, 128, 256, 512, 1024]) {
      const meta = await sharp(
        new URL(`resources/icons/${size}x${size}.png`, root).pathname,
      ).metadata();
      expect([meta.format, meta.width, meta.height, meta.hasAlpha]).toEqual([
        'png',
        size,
        size,
        true,
      ]);
    }
    const icon = await sharp(new URL('resources/icon.png', root).pathname).stats();
    expect(icon.isOpaque).toBe(false); // rounded corners are transparent
    expect(icon.channels.slice(0, 3).some((channel) => channel.stdev > 20)).toBe(true); // not blank
  });

  it('names the scripts the README documents', async () => {
    const pkg = JSON.parse(await readFile(new URL('package.json', root), 'utf8'));
    expect(pkg.main).toBe('out/main/index.js');
    // The desktop app (main, preload, renderer) and the headless server's build; both bundles
    // are parsed once built (a name clash only shows in the bundle: Electron would die at launch).
    expect(pkg.scripts.build).toBe(
      'electron-vite build && npm run build:server --silent && node --check out/main/index.js && node --check out/server/cli.js',
    );
    // The desktop commands fetch the Electron runtime first (npm 11 skips its install script).
    expect(pkg.scripts.start).toMatch(
      /^node scripts\/ensure-electron\.mjs && electron-vite preview$/,
    );
    expect(pkg.scripts.dev).toMatch(/^node scripts\/ensure-electron\.mjs && electron-vite dev$/);
    expect(pkg.scripts.dist).toMatch(
      /ensure-electron\.mjs && electron-vite build && electron-builder$/,
    );
  });
});
