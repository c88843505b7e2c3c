import type { Db } from '@sched/db';

/**
 * A prepared statement built once per Db (drizzle keeps the SQL; pg prepares it once per connection
 * by its name), for the queries every Slots request runs. Statement names must be unique per service.
 */
export function preparedPerDb<P>(build: (db: Db) => P): (db: Db) => P {
  const cache = new WeakMap<Db, P>();
  return (db) => {
    let statement = cache.get(db);
    if (!statement) {
      statement = build(db);
      cache.set(db, statement);
    }
    return statement;
  };
}
