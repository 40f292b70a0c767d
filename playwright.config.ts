import { defineConfig } from '@playwright/test';

/**
 * End-to-end tests in Debian's Chromium against a real headless server on a temporary data
 * directory (see test/e2e/global-setup.ts, which also sets E2E_BASE_URL for the workers).
 * Run `npm run build:renderer` first; `npm run test:e2e` does both.
 */
export default defineConfig({
  testDir: 'test/e2e',
  outputDir: 'test-results/e2e-artifacts',
  globalSetup: './test/e2e/global-setup.ts',
  // One server, one data directory, and a journey whose steps build on each other.
  workers: 1,
  fullyParallel: false,
  forbidOnly: Boolean(process.env.CI),
  retries: 0,
  timeout: 90_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  projects: [
    { name: 'web', testIgnore: /desktop-app\.spec\.ts$/ },
    // Launches the built Electron app itself; skips with a reason where no Electron binary exists.
    { name: 'electron', testMatch: /desktop-app\.spec\.ts$/ },
  ],
  use: {
    baseURL: process.env.E2E_BASE_URL,
    browserName: 'chromium',
    viewport: { width: 1280, height: 860 },
    locale: 'en-GB',
    actionTimeout: 15_000,
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
});
