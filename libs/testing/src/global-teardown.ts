import type { StartedTestContainer } from 'testcontainers';
import { CONTAINERS_KEY } from './global-setup';

/**
 * Jest globalTeardown: stops containers the setup started. Without it the testcontainers
 * reaper (Ryuk) still removes them when the Jest process exits, only later.
 */
export default async function globalTeardown(): Promise<void> {
  const g = globalThis as typeof globalThis & { [CONTAINERS_KEY]?: StartedTestContainer[] };
  const containers = g[CONTAINERS_KEY] ?? [];
  delete g[CONTAINERS_KEY];
  await Promise.all(containers.map((c) => c.stop()));
}
