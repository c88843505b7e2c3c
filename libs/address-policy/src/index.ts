export { canonicalAddress, defaultAddressMode, isAllowedAddress, isLocalhostName, type AddressMode } from './address';
export { checkTargetUrl, type TargetRules, type TargetUrl, type UrlProblem } from './target-url';
export { AddressNotAllowedError, guardedLookup, systemResolveAll, type ResolveAll } from './guarded-lookup';
export { createGuardedGot, UrlNotAllowedError, type GuardedGot, type GuardedGotOptions } from './guarded-got';
