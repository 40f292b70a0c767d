// electron-builder afterPack hook: flips Electron's fuses in the packaged binary, before it is
// signed (electron-builder signs after this hook; flipping fuses later would break the signature).
// Fuses are compiled-in switches that no command-line flag or environment variable can undo.
import { FuseV1Options, FuseVersion } from '@electron/fuses';

/**
 * @param {string} platform electron-builder's electronPlatformName (darwin, mas, win32, linux)
 * @returns {import('@electron/fuses').FuseV1Config}
 */
export function fuseConfig(platform) {
  return {
    version: FuseVersion.V1,
    // macOS: flipping fuses invalidates the ad-hoc signature of an unsigned (arm64) build.
    resetAdHocDarwinSignature: platform === 'darwin' || platform === 'mas',
    // ELECTRON_RUN_AS_NODE would turn the app into a plain Node.js that runs any script.
    [FuseV1Options.RunAsNode]: false,
    // NODE_OPTIONS could preload arbitrary code into the main process.
    [FuseV1Options.EnableNodeOptionsEnvironmentVariable]: false,
    // --inspect and friends would open a debugger port into the main process.
    [FuseV1Options.EnableNodeCliInspectArguments]: false,
    // The app code in app.asar is checked against the hash embedded at build time...
    [FuseV1Options.EnableEmbeddedAsarIntegrityValidation]: true,
    // ...and only app.asar is loaded, so a loose app/ folder next to it cannot replace it.
    [FuseV1Options.OnlyLoadAppFromAsar]: true,
    // The app never loads file:// pages; do not give them extra privileges.
    [FuseV1Options.GrantFileProtocolExtraPrivileges]: false,
  };
}

/** @param {import('electron-builder').AfterPackContext} context */
export default async function afterPack(context) {
  // addElectronFuses finds the executable for the platform and runs @electron/fuses' flipFuses.
  await context.packager.addElectronFuses(context, fuseConfig(context.electronPlatformName));
}
