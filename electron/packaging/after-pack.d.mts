import type { FuseV1Config } from '@electron/fuses';
import type { AfterPackContext } from 'electron-builder';

export function fuseConfig(platform: string): FuseV1Config;
export default function afterPack(context: AfterPackContext): Promise<void>;
