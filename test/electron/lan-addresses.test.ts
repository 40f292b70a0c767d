import type { NetworkInterfaceInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { listLanAddresses } from '../../electron/main/lan-addresses';

const v4 = (address: string, internal = false) =>
  ({
    address,
    family: 'IPv4',
    internal,
    netmask: '255.255.255.0',
    mac: '',
    cidr: null,
  }) as NetworkInterfaceInfo;
const v6 = (address: string, internal = false) =>
  ({
    address,
    family: 'IPv6',
    internal,
    netmask: 'ffff::',
    mac: '',
    cidr: null,
    scopeid: 0,
  }) as NetworkInterfaceInfo;

describe('LAN address listing', () => {
  it('lists non-internal IPv4 addresses as URLs with the port', () => {
    const addresses = listLanAddresses(8080, {
      lo: [v4('127.0.0.1', true), v6('::1', true)],
      wlan0: [v4('192.168.1.20'), v6('fe80::1')],
      eth0: [v4('10.0.0.5')],
    });
    expect(addresses).toEqual([
      { interfaceName: 'eth0', address: '10.0.0.5', url: 'http://10.0.0.5:8080/' },
      { interfaceName: 'wlan0', address: '192.168.1.20', url: 'http://192.168.1.20:8080/' },
    ]);
  });

  it('puts link-local addresses last and copes with empty interfaces', () => {
    const addresses = listLanAddresses(9000, {
      a: [v4('169.254.3.4')],
      b: [v4('192.168.0.2')],
      c: undefined,
      d: [],
    });
    expect(addresses.map((a) => a.address)).toEqual(['192.168.0.2', '169.254.3.4']);
  });

  it('is empty on a machine without a network', () => {
    expect(listLanAddresses(8080, { lo: [v4('127.0.0.1', true)] })).toEqual([]);
  });

  it('reads the real interfaces by default', () => {
    for (const address of listLanAddresses(8080)) {
      expect(address.url).toMatch(/^http:\/\/\d+\.\d+\.\d+\.\d+:8080\/$/);
      expect(address.address.startsWith('127.')).toBe(false);
    }
  });
});
