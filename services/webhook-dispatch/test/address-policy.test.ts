import { checkTargetUrl, isAllowedAddress } from '../src/domain/address-policy';

describe('which resolved addresses may receive webhooks', () => {
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
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1', // multicast
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    '192.0.2.10',
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
    '64:ff9b::a9fe:a9fe', // NAT64 of the metadata address
    '2001:db8::1',
    'not-an-ip',
  ];
  const loopback = ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1'];
  const publicOnes = ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'];

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
});

describe('target URL rules', () => {
  it('accepts https everywhere and http only in local mode', () => {
    expect(checkTargetUrl('https://hooks.example.com/in', 'production').ok).toBe(true);
    expect(checkTargetUrl('http://hooks.example.com/in', 'local').ok).toBe(true);
    expect(checkTargetUrl('http://hooks.example.com/in', 'production')).toEqual({ ok: false, problem: 'scheme_not_allowed' });
    expect(checkTargetUrl('ftp://hooks.example.com/in', 'local')).toEqual({ ok: false, problem: 'scheme_not_allowed' });
  });

  it('refuses a user:password in the URL, which would be stored and shown in clear', () => {
    expect(checkTargetUrl('https://user:pw@hooks.example.com/in', 'local')).toEqual({ ok: false, problem: 'credentials_not_allowed' });
  });

  it('checks IP literals itself, in every spelling URL parsing normalises (decimal, hex, bracketed IPv6)', () => {
    for (const url of ['https://127.0.0.1/', 'https://2130706433/', 'https://0x7f.1/', 'https://[::1]/', 'https://[::ffff:127.0.0.1]/']) {
      expect(checkTargetUrl(url, 'production')).toEqual({ ok: false, problem: 'address_not_allowed' });
      expect(checkTargetUrl(url, 'local').ok).toBe(true);
    }
    expect(checkTargetUrl('https://10.1.2.3/', 'local')).toEqual({ ok: false, problem: 'address_not_allowed' });
    expect(checkTargetUrl('https://169.254.169.254/latest/meta-data', 'local')).toEqual({ ok: false, problem: 'address_not_allowed' });
  });

  it('leaves names to the DNS check and reports the host without brackets', () => {
    const checked = checkTargetUrl('https://localhost:8443/x', 'production');
    expect(checked).toMatchObject({ ok: true, target: { host: 'localhost' } });
    expect(checkTargetUrl('https://[2606:4700:4700::1111]/', 'production')).toMatchObject({ ok: true, target: { ipLiteral: '2606:4700:4700::1111' } });
  });
});
