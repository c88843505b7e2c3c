export { idempotencyTable, type IdempotencyTable } from './idempotency-table';
export { parseIdempotencyKey, IDEMPOTENCY_KEY_FIELD } from './idempotency-key';
export { canonicalJson, normalizePath, requestFingerprint, scopedKeyId, type IdempotencyScope } from './fingerprint';
export {
  runIdempotent,
  idempotencyRowIdentity,
  replayFoundRow,
  findLiveAnswer,
  type FoundIdempotencyRow,
  defaultStorableError,
  dataAnswer,
  isStorableStatus,
  withRequestId,
  DEFAULT_RETENTION_MS,
  IDEMPOTENT_REPLAYED_HEADER,
  type RunIdempotentOptions,
  type StoredResponse,
  type IdempotentOutcome,
  type ResponseSealer,
} from './run-idempotent';
export { idempotencyRetentionRule } from './cleanup';
export type { AnyPgDatabase, TxOf } from './db-types';
export { idempotencyProtocolSql } from './protocol-sql';
