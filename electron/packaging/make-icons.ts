/**
 * Renders the app icon set from resources/icon.svg (run `npm run icons` after editing the SVG;
 * the PNGs are committed so packaging needs no extra step). electron-builder turns these into
 * the platform formats itself: .ico for Windows from icon.png (256 px and up), .icns for
 * macOS from icons/1024x1024.png; Linux uses the icons/ folder as it is.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

const resources = (path: string) =>
  fileURLToPath(new URL(`../../resources/${path}`, import.meta.url));
export const ICON_SIZES = [16, 24, 32, 48, 64, 128, 256, 512, 1024] as const;

async function render(svg: Buffer, size: number, target: string): Promise<void> {
  // Render at a high density, then resize: small sizes come out sharper than a direct render.
  await sharp(svg, { density: 384 })
    .resize(size, size, { kernel: 'lanczos3' })
    .png({ compressionLevel: 9 })
    .toFile(target);
}

async function main(): Promise<void> {
  const svg = await readFile(resources('icon.svg'));
  await mkdir(resources('icons'), { recursive: true });
  for (const size of ICON_SIZES) await render(svg, size, resources(`icons/${size}x${size}.png`));
  await render(svg, 512, resources('icon.png'));
  process.stdout.write(
    `Wrote resources/icon.png and ${ICON_SIZES.length} sizes under resources/icons/.\n`,
  );
}

await main();
