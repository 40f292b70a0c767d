import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import type { LanAddress } from '../../shared/desktop-bridge';

type Interfaces = Record<string, NetworkInterfaceInfo[] | undefined>;

/**
 * The addresses another computer on the LAN can use to reach a server listening on 0.0.0.0.
 * Only non-internal IPv4: the LAN listener binds 0.0.0.0, which does not accept IPv6, and
 * loopback addresses are useless from another machine. Link-local (169.254.x.x) addresses come
 * last: they only work on an ad-hoc link without DHCP.
 */
export function listLanAddresses(
  port: number,
  interfaces: Interfaces = networkInterfaces(),
): LanAddress[] {
  const found: LanAddress[] = [];
  for (const [interfaceName, infos] of Object.entries(interfaces)) {
    for (const info of infos ?? []) {
      if (info.internal || info.family !== 'IPv4') continue;
      found.push({ interfaceName, address: info.address, url: `http://${info.address}:${port}/` });
    }
  }
  const linkLocal = (address: LanAddress) => (address.address.startsWith('169.254.') ? 1 : 0);
  return found.sort(
    (a, b) =>
      linkLocal(a) - linkLocal(b) ||
      a.interfaceName.localeCompare(b.interfaceName) ||
      a.address.localeCompare(b.address),
  );
}
