import { isIP } from 'node:net';

/**
 * Where webhooks may go (decisions.md §11, SSRF guard). In production mode only public unicast
 * addresses; local mode (development and tests) also allows loopback, nothing else. The check runs
 * on the resolved addresses, never on the host name, and the sender connects to the address checked.
 */
export type WebhookMode = 'local' | 'production';

type Cidr = readonly [base: number, bits: number];

// IPv4 ranges that are never a customer's public receiver: "this network", private, CGNAT,
// link-local (cloud metadata 169.254.169.254), IETF/documentation/benchmark nets, multicast,
// reserved and broadcast.
const FORBIDDEN_V4: readonly Cidr[] = [
  [v4('0.0.0.0'), 8],
  [v4('10.0.0.0'), 8],
  [v4('100.64.0.0'), 10],
  [v4('169.254.0.0'), 16],
  [v4('172.16.0.0'), 12],
  [v4('192.0.0.0'), 24],
  [v4('192.0.2.0'), 24],
  [v4('192.168.0.0'), 16],
  [v4('198.18.0.0'), 15],
  [v4('198.51.100.0'), 24],
  [v4('203.0.113.0'), 24],
  [v4('224.0.0.0'), 4],
  [v4('240.0.0.0'), 4],
];
const LOOPBACK_V4: Cidr = [v4('127.0.0.0'), 8];

function v4(address: string): number {
  return address.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

function inV4(ip: number, [base, bits]: Cidr): boolean {
  const size = 2 ** (32 - bits);
  return Math.floor(ip / size) === Math.floor(base / size);
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped, embedded IPv4 tail expanded). */
function v6Groups(address: string): number[] | null {
  let s = address.split('%')[0]!.toLowerCase();
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const n = v4(tail[1]!);
    s = `${s.slice(0, -tail[1]!.length)}${Math.floor(n / 65536).toString(16)}:${(n % 65536).toString(16)}`;
  }
  const [head, rest] = s.split('::');
  const left = head ? head.split(':') : [];
  const right = rest ? rest.split(':') : [];
  const fill = s.includes('::') ? 8 - left.length - right.length : 0;
  const groups = [...left, ...Array<string>(fill).fill('0'), ...right].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

function v4Allowed(n: number, mode: WebhookMode): boolean {
  if (inV4(n, LOOPBACK_V4)) return mode === 'local';
  return !FORBIDDEN_V4.some((cidr) => inV4(n, cidr));
}

function v6Allowed(g: number[], mode: WebhookMode): boolean {
  const zeroPrefix = (count: number) => g.slice(0, count).every((x) => x === 0);
  const embeddedV4 = g[6]! * 65536 + g[7]!;
  if (zeroPrefix(7) && g[7] === 1) return mode === 'local'; // ::1
  if (zeroPrefix(8)) return false; // ::
  if (zeroPrefix(5) && g[5] === 0xffff) return v4Allowed(embeddedV4, mode); // ::ffff:a.b.c.d (IPv4-mapped)
  if (zeroPrefix(6)) return v4Allowed(embeddedV4, mode); // ::a.b.c.d (IPv4-compatible, deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return v4Allowed(embeddedV4, mode); // NAT64
  const first = g[0]!;
  if ((first & 0xfe00) === 0xfc00) return false; // fc00::/7 unique local
  if ((first & 0xffc0) === 0xfe80) return false; // fe80::/10 link-local
  if ((first & 0xffc0) === 0xfec0) return false; // fec0::/10 site-local (deprecated)
  if ((first & 0xff00) === 0xff00) return false; // ff00::/8 multicast
  if (first === 0x2001 && g[1] === 0x0db8) return false; // documentation
  if (first === 0x0100 && zeroPrefix(4)) return false; // 100::/64 discard
  return true;
}

/** Whether a resolved address may receive webhooks in this mode. Anything unparsable is refused. */
export function isAllowedAddress(address: string, mode: WebhookMode): boolean {
  const family = isIP(address.split('%')[0]!);
  if (family === 4) return v4Allowed(v4(address), mode);
  if (family === 6) {
    const groups = v6Groups(address);
    return groups !== null && v6Allowed(groups, mode);
  }
  return false;
}

export type UrlProblem = 'invalid_format' | 'scheme_not_allowed' | 'credentials_not_allowed' | 'address_not_allowed';

export interface TargetUrl {
  url: URL;
  /** Host name without IPv6 brackets. */
  host: string;
  /** Set when the host is an IP literal: no DNS lookup happens, so the address is checked here. */
  ipLiteral?: string;
}

/**
 * Shape rules, checked at endpoint creation and again before every attempt: http or https (https
 * only in production: the body carries guests' personal data), no user:password (it would be stored
 * and shown in plain text), and an IP literal must itself be allowed.
 */
export function checkTargetUrl(raw: string, mode: WebhookMode): { ok: true; target: TargetUrl } | { ok: false; problem: UrlProblem } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, problem: 'invalid_format' };
  }
  const schemes = mode === 'production' ? ['https:'] : ['https:', 'http:'];
  if (!schemes.includes(url.protocol)) return { ok: false, problem: 'scheme_not_allowed' };
  if (url.username || url.password) return { ok: false, problem: 'credentials_not_allowed' };
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) return { ok: false, problem: 'invalid_format' };
  if (isIP(host)) {
    if (!isAllowedAddress(host, mode)) return { ok: false, problem: 'address_not_allowed' };
    return { ok: true, target: { url, host, ipLiteral: host } };
  }
  return { ok: true, target: { url, host } };
}
