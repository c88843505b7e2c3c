import { Pool, type PoolClient } from 'pg';
import { statementsIn } from '@sched/testing';
import type { TestDatabase } from './test-database';

/** Round trips, statements and BEGINs a pool sent, and the statements by kind (verb and object). */
export interface Counts {
  roundTrips: number;
  statements: number;
  begins: number;
  byKind: Map<string, number>;
}

/** A pool whose every query is counted (round trips, statements, BEGINs), for the code under test alone. */
export function countingPool(tdb: TestDatabase, applicationName: string): { pool: Pool; counts: Counts; reset(): void } {
  const counts: Counts = { roundTrips: 0, statements: 0, begins: 0, byKind: new Map() };
  const pool = new Pool({ host: '127.0.0.1', port: 5432, user: 'postgres', database: tdb.name, max: 20, application_name: applicationName });
  pool.on('error', () => undefined);
  pool.on('connect', (client: PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0];
      const named = typeof first === 'object' && first !== null && 'name' in first && (first as { name?: string }).name;
      const text = typeof first === 'string' ? first : ((first as { text?: string })?.text ?? '');
      const stmts = named ? [text] : statementsIn(text);
      counts.roundTrips += 1;
      counts.statements += stmts.length;
      for (const s of stmts) {
        // The verb and its object (EXECUTE: the statement's name), e.g. `INSERT INTO`, `EXECUTE sched_outbox_…`.
        const kind = s.split(/[\s(]+/, 2).join(' ');
        if (/^begin/i.test(kind)) counts.begins += 1;
        counts.byKind.set(kind, (counts.byKind.get(kind) ?? 0) + 1);
      }
      return query(...args);
    };
  });
  return {
    pool,
    counts,
    reset() {
      counts.roundTrips = 0;
      counts.statements = 0;
      counts.begins = 0;
      counts.byKind.clear();
    },
  };
}

