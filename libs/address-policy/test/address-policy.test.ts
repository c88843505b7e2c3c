import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { AddressNotAllowedError, canonicalAddress, checkTargetUrl, defaultAddressMode, guardedLookup, isAllowedAddress, type TargetRules } from '../src';

const ANY_SCHEME: TargetRules = { productionSchemes: ['https:', 'http:'] };
const HTTPS_ONLY: TargetRules = { productionSchemes: ['https:'] };

describe('which addresses may be connected to', () => {
  const neverPublic = [
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.254',
    '192.168.1.1',
    '169.254.169.254', // cloud metadata
    '169.254.0.1',
    '100.64.0.1', // CGNAT
    '100.127.255.254',
    '0.0.0.0', // "this host": connecting to it reaches loopback on Linux
    '0.1.2.3',
    '224.0.0.1', // multicast
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    '192.0.2.10',
    '192.88.99.1', // 6to4 relay anycast
    '198.18.0.1',
    '::',
    'fc00::1', // unique local
    'fd12:3456:789a::1',
    'fe80::1', // link-local
    'fe80::1%eth0',
    'ff02::1', // multicast
    '::ffff:10.0.0.1', // IPv4-mapped private
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe', // the same, in hex form (as URL parsing writes it)
    '::ffff:0:a9fe:a9fe', // IPv4-translated (SIIT) metadata address
    '::ffff:0:127.0.0.1', // IPv4-translated loopback: not loopback for a socket, refused in both modes
    '::a9fe:a9fe', // IPv4-compatible (deprecated)
    '::127.0.0.1',
    '64:ff9b::a9fe:a9fe', // NAT64 of the metadata address
    '64:ff9b::10.1.2.3',
    '64:ff9b::7f00:1',
    '64:ff9b:1::a9fe:a9fe', // local-use NAT64 prefix: refused whatever it embeds
    '64:ff9b:1::808:808',
    '2002:a9fe:a9fe::1', // 6to4 of the metadata address
    '2002:7f00:1::1',
    '2002:c0a8:101::1', // 6to4 of 192.168.1.1
    '2001::1', // Teredo
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001:db8::1', // documentation
    '3fff::1', // documentation (RFC 9637)
    '2001:2::1', // benchmarking
    '100::1', // discard
    '::2', // reserved ::/16
    'not-an-ip',
    '',
  ];
  const loopback = ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '0x7f000001', '2130706433', '0177.0.0.1', '127.1'];
  const publicOnes = [
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808', // NAT64 (DNS64) of a public address: IPv6-only networks reach IPv4 servers so
    '2002:808:808::1', // 6to4 of a public address
    '0x08080808', // 8.8.8.8 in hex
  ];

  it.each(neverPublic)('refuses %s in production and in local mode', (ip) => {
    expect(isAllowedAddress(ip, 'production')).toBe(false);
    expect(isAllowedAddress(ip, 'local')).toBe(false);
  });

  it.each(loopback)('refuses loopback %s in production but allows it in local mode', (ip) => {
    expect(isAllowedAddress(ip, 'production')).toBe(false);
    expect(isAllowedAddress(ip, 'local')).toBe(true);
  });

  it.each(publicOnes)('allows public %s in both modes', (ip) => {
    expect(isAllowedAddress(ip, 'production')).toBe(true);
    expect(isAllowedAddress(ip, 'local')).toBe(true);
  });

  it('reads every IPv4 spelling getaddrinfo and URL parsing accept as the address it is', () => {
    for (const s of ['0x7f000001', '2130706433', '0177.0.0.1', '127.1', '0x7f.1', '017700000001']) expect(canonicalAddress(s)).toBe('127.0.0.1');
    expect(canonicalAddress('[::ffff:127.0.0.1]')).toBe('::ffff:127.0.0.1');
    expect(canonicalAddress('calendar.example.com')).toBeNull();
    expect(canonicalAddress('localhost')).toBeNull();
  });

  it('defaults to production mode only when NODE_ENV=production', () => {
    expect(defaultAddressMode('production')).toBe('production');
    for (const env of ['development', 'test', '', undefined]) expect(defaultAddressMode(env)).toBe('local');
  });
});

describe('target URL rules', () => {
  it('accepts https everywhere and http in production only where the rules say so', () => {
    expect(checkTargetUrl('https://hooks.example.com/in', 'production', HTTPS_ONLY).ok).toBe(true);
    expect(checkTargetUrl('http://hooks.example.com/in', 'local', HTTPS_ONLY).ok).toBe(true);
    expect(checkTargetUrl('http://hooks.example.com/in', 'production', HTTPS_ONLY)).toEqual({ ok: false, problem: 'scheme_not_allowed' });
    expect(checkTargetUrl('http://dav.example.com/', 'production', ANY_SCHEME).ok).toBe(true);
    expect(checkTargetUrl('ftp://hooks.example.com/in', 'local', ANY_SCHEME)).toEqual({ ok: false, problem: 'scheme_not_allowed' });
  });

  it('refuses a user:password in the URL, which would be stored and shown in clear', () => {
    expect(checkTargetUrl('https://user:pw@hooks.example.com/in', 'local', HTTPS_ONLY)).toEqual({ ok: false, problem: 'credentials_not_allowed' });
  });

  // Every spelling of a host that is not a public server, as it may appear in a URL.
  const hostile = [
    '127.0.0.1',
    '127.1',
    '0.0.0.0',
    '0',
    '2130706433',
    '0x7f000001',
    '0x7f.1',
    '0177.0.0.1',
    '017700000001',
    '[::1]',
    '[::]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[::ffff:0:a9fe:a9fe]',
    '[2002:a9fe:a9fe::1]',
    '[64:ff9b::a9fe:a9fe]',
    '[64:ff9b:1::a9fe:a9fe]',
    '[2001::1]',
    '[fd00::1]',
    '[fe80::1]',
    '[ff02::1]',
    '169.254.169.254',
    '0xa9fea9fe',
    '2852039166', // 169.254.169.254 in decimal
    '10.0.0.1',
    '192.168.0.1',
    '172.16.0.1',
    '100.64.0.1',
    '224.0.0.1',
    'localhost',
    'LOCALHOST',
    'localhost.',
    'calendar.localhost',
    'a.b.localhost',
  ];

  it.each(hostile)('refuses http://%s/ in production mode (address_not_allowed)', (host) => {
    for (const url of [`http://${host}/`, `https://${host}:8443/dav/`]) {
      expect(checkTargetUrl(url, 'production', ANY_SCHEME)).toEqual({ ok: false, problem: 'address_not_allowed' });
    }
  });

  it('allows loopback spellings and localhost in local mode, still not private addresses', () => {
    for (const url of ['https://127.0.0.1/', 'https://2130706433/', 'https://0x7f.1/', 'https://[::1]/', 'https://[::ffff:127.0.0.1]/', 'http://localhost:5232/']) {
      expect(checkTargetUrl(url, 'local', HTTPS_ONLY).ok).toBe(true);
    }
    expect(checkTargetUrl('https://10.1.2.3/', 'local', HTTPS_ONLY)).toEqual({ ok: false, problem: 'address_not_allowed' });
    expect(checkTargetUrl('https://169.254.169.254/latest/meta-data', 'local', HTTPS_ONLY)).toEqual({ ok: false, problem: 'address_not_allowed' });
    expect(checkTargetUrl('http://0.0.0.0:5232/', 'local', ANY_SCHEME)).toEqual({ ok: false, problem: 'address_not_allowed' });
  });

  it('leaves other names to the DNS check, and reports the host without brackets and the literal as it is reached', () => {
    expect(checkTargetUrl('https://dav.example.com:8443/x', 'production', HTTPS_ONLY)).toMatchObject({ ok: true, target: { host: 'dav.example.com' } });
    expect(checkTargetUrl('https://[2606:4700:4700::1111]/', 'production', HTTPS_ONLY)).toMatchObject({ ok: true, target: { ipLiteral: '2606:4700:4700::1111' } });
    expect(checkTargetUrl('https://0x08080808/', 'production', HTTPS_ONLY)).toMatchObject({ ok: true, target: { ipLiteral: '8.8.8.8' } });
  });
});

describe('guardedLookup (connect time)', () => {
  const lookupWith = (records: LookupAddress[], mode: 'local' | 'production', options: Partial<Parameters<LookupFunction>[1]> = {}) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) => {
      guardedLookup(mode, async () => records)('dav.example.test', options as Parameters<LookupFunction>[1], (err, address, family) => resolve({ err, address, family }));
    });

  it('refuses a name when any of its addresses is not allowed, before a socket is opened', async () => {
    for (const records of [[{ address: '10.0.0.7', family: 4 }], [{ address: '93.184.216.34', family: 4 }, { address: '169.254.169.254', family: 4 }], [{ address: '64:ff9b::a9fe:a9fe', family: 6 }]]) {
      const { err } = await lookupWith(records, 'production');
      expect(err).toBeInstanceOf(AddressNotAllowedError);
    }
    expect((await lookupWith([{ address: '127.0.0.1', family: 4 }], 'production')).err).toBeInstanceOf(AddressNotAllowedError);
  });

  it('hands the socket exactly the addresses it checked', async () => {
    expect(await lookupWith([{ address: '93.184.216.34', family: 4 }], 'production')).toEqual({ err: null, address: '93.184.216.34', family: 4 });
    expect(await lookupWith([{ address: '127.0.0.1', family: 4 }], 'local')).toEqual({ err: null, address: '127.0.0.1', family: 4 });
    const all = await lookupWith([{ address: '93.184.216.34', family: 4 }, { address: '2606:2800:220:1::1', family: 6 }], 'production', { all: true });
    expect(all.address).toEqual([{ address: '93.184.216.34', family: 4 }, { address: '2606:2800:220:1::1', family: 6 }]);
  });
});
