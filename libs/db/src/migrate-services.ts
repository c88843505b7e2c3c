import path from 'node:path';
import { ensureDatabase } from './ensure-database';
import { migrateService, type MigrateServiceResult } from './migrate-service';
import { describeConnectionError, pgErrorCode } from './pg-errors';
import { isServiceName, SERVICE_NAMES, type ServiceName } from './services';

export const DEFAULT_MIGRATE_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/scheduling';

/**
 * A failure the operator can act on from the message alone (unknown service, Postgres
 * unreachable, a migration's SQL rejected). `pnpm migrate` prints it without a stack.
 */
export class MigrateError extends Error {
  constructor(
    message: string,
    public readonly service?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MigrateError';
  }
}

export interface MigrateServicesOptions {
  /** Superuser URL into the target database (created when missing). */
  adminUrl: string;
  /** Folder holding services/<name>/migrations, i.e. the repository's `services` folder. */
  servicesDir: string;
  /** Only these services (in the fixed order); all six when empty or absent. */
  only?: readonly string[];
  passwords?: Partial<Record<ServiceName, string>>;
  /** Called after each service, so a CLI can print progress as it goes. */
  onMigrated?: (result: MigrateServiceResult) => void;
  logger?: { info(message: string, meta?: Record<string, unknown>): unknown };
}

/** Ensures the database, then migrates the services one after another. Core of `pnpm migrate`. */
export async function migrateServices(opts: MigrateServicesOptions): Promise<MigrateServiceResult[]> {
  const unknown = (opts.only ?? []).filter((s) => !isServiceName(s));
  if (unknown.length > 0) {
    throw new MigrateError(`unknown service(s): ${unknown.join(', ')}; expected one of ${SERVICE_NAMES.join(', ')}`);
  }
  const wanted = opts.only && opts.only.length > 0 ? SERVICE_NAMES.filter((s) => opts.only!.includes(s)) : SERVICE_NAMES;
  try {
    await ensureDatabase(opts.adminUrl);
  } catch (err) {
    throw asMigrateError(err, opts.adminUrl);
  }
  const results: MigrateServiceResult[] = [];
  for (const service of wanted) {
    let result: MigrateServiceResult;
    try {
      result = await migrateService({
        adminUrl: opts.adminUrl,
        service,
        migrationsFolder: path.join(opts.servicesDir, service, 'migrations'),
        rolePassword: opts.passwords?.[service],
        logger: opts.logger,
      });
    } catch (err) {
      throw asMigrateError(err, opts.adminUrl, service);
    }
    results.push(result);
    opts.onMigrated?.(result);
  }
  return results;
}

/** DB_PASSWORD_<SERVICE> (upper snake case, e.g. DB_PASSWORD_CALENDAR_SYNC) for each service that has one. */
export function passwordsFromEnv(env: Record<string, string | undefined>): Partial<Record<ServiceName, string>> {
  const out: Partial<Record<ServiceName, string>> = {};
  for (const service of SERVICE_NAMES) {
    const value = env[`DB_PASSWORD_${service.toUpperCase().replace(/-/g, '_')}`];
    if (value) out[service] = value;
  }
  return out;
}

/** Connection problems and SQL errors become readable MigrateErrors; programming errors pass through with their stack. */
function asMigrateError(err: unknown, url: string, service?: string): unknown {
  if (err instanceof MigrateError) return err;
  const prefix = service ? `${service}: ` : '';
  const connection = describeConnectionError(err, url);
  if (connection) return new MigrateError(`${prefix}${connection}`, service, { cause: err });
  const code = pgErrorCode(err);
  if (code && /^[0-9A-Z]{5}$/.test(code)) {
    const e = err as Error & { detail?: string; hint?: string };
    const extra = [e.detail && `detail: ${e.detail}`, e.hint && `hint: ${e.hint}`].filter(Boolean).join('; ');
    return new MigrateError(`${prefix}Postgres error ${code}: ${e.message}${extra ? ` (${extra})` : ''}`, service, { cause: err });
  }
  // drizzle wraps a failing statement as "Failed query: <sql>" with the pg error as cause.
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (cause && pgErrorCode(cause)) {
    const wrapped = asMigrateError(cause, url, service);
    if (wrapped instanceof MigrateError) {
      return new MigrateError(`${wrapped.message}\n  in: ${(err as Error).message.split('\n')[0]}`, service, { cause: err });
    }
  }
  if (err instanceof Error && /Can't find meta\/_journal.json|No file .* found in/.test(err.message)) {
    return new MigrateError(`${prefix}${err.message}`, service, { cause: err });
  }
  return err;
}
