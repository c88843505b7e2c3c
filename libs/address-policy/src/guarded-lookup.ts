import dns, { type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isAllowedAddress, type AddressMode } from './address';

/** A host resolved to an address this mode does not allow; nothing was sent. */
export class AddressNotAllowedError extends Error {
  readonly code = 'EADDRNOTALLOWED';
  constructor(host: string) {
    super(`${host} resolves to an address that is not allowed in this mode`);
    this.name = 'AddressNotAllowedError';
  }
}

export type ResolveAll = (host: string) => Promise<LookupAddress[]>;

export const systemResolveAll: ResolveAll = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

/**
 * A `lookup` for http.request / net.connect that resolves the name itself, refuses it when ANY
 * address is not allowed (a name mixing a public and a private record is an attack, not a typo),
 * and hands the socket exactly the addresses it checked: the connection goes to a checked address,
 * so a DNS answer that changes between check and connect (rebinding) cannot redirect it. Node skips
 * lookup for IP literals: callers check those themselves (checkTargetUrl).
 */
export function guardedLookup(mode: AddressMode, resolveAll: ResolveAll = systemResolveAll): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname).then(
      (found) => {
        if (found.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
        if (!found.every((a) => isAllowedAddress(a.address, mode))) return callback(new AddressNotAllowedError(hostname), '', 0);
        const usable = options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : found;
        if (usable.length === 0) return callback(Object.assign(new Error(`no IPv${options.family} address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
        // With autoSelectFamily (the Node 20 default) net asks for every address and races them.
        if (options.all) return callback(null, usable);
        callback(null, usable[0]!.address, usable[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}
