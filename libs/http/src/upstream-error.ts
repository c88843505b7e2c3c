import { DomainError } from '@sched/contracts';

export type UpstreamErrorKind = 'timeout' | 'unreachable' | 'invalid_response';

/** A call to another service got no usable HTTP answer. HTTP error statuses are not this: they are returned. */
export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamErrorKind,
    readonly service: string,
    options?: { cause?: unknown },
  ) {
    super(`upstream ${service}: ${kind}`, options);
    this.name = 'UpstreamError';
  }
}

/** For the edge: 504 when the upstream was too slow, 502 when it could not be reached or answered garbage. */
export function toUpstreamDomainError(err: UpstreamError): DomainError {
  return new DomainError('upstream_unavailable', { status: err.kind === 'timeout' ? 504 : 502 });
}
