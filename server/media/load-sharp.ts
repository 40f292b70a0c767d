import type Sharp from 'sharp';
import { lazyRequire } from '../lazy-require';

/** sharp, loaded on first use: loading libvips takes tens of milliseconds. */
export const loadSharp = lazyRequire<typeof Sharp>('sharp');
