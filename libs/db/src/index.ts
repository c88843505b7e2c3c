export { createPool, createDb, checkPostgres, type PoolOptions, type Db, type DbTx } from './pool';
export { startNotificationListener, type NotificationListener, type NotificationListenerOptions } from './listen';
export { SERVICES, SERVICE_NAMES, serviceDbNames, isServiceName, quoteIdent, type ServiceName, type ServiceDbNames } from './services';
export { ensureDatabase } from './ensure-database';
export { migrateService, MIGRATIONS_TABLE, type MigrateServiceOptions, type MigrateServiceResult } from './migrate-service';
export { EXTENSIONS } from './provision-service';
export {
  migrateServices,
  passwordsFromEnv,
  MigrateError,
  DEFAULT_MIGRATE_DATABASE_URL,
  type MigrateServicesOptions,
} from './migrate-services';
export { withDatabase, withCredentials, databaseName } from './database-url';
export { describeConnectionError, isDuplicateError, pgErrorCode, PG } from './pg-errors';
export {
  startRetentionJob,
  pruneTable,
  retentionSelectSql,
  explainRetentionRule,
  retentionLabel,
  DEFAULT_RETENTION_BATCH_SIZE,
  DEFAULT_RETENTION_MAX_BATCHES,
  type RetentionRule,
  type RetentionChild,
  type RetentionMetrics,
  type RetentionDb,
  type RetentionJob,
  type RetentionJobOptions,
  type RetentionLogger,
  type PruneOptions,
} from './retention';
export { storeUnavailable, isStoreUnavailable, type StoreUnavailable } from './store-unavailable';
