import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** A run's figures start empty: scenarios of an earlier run are never reported as this run's. */
export default function globalSetup(): void {
  const file = path.resolve(__dirname, '../../.data/resilience.json');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ startedAt: new Date().toISOString(), scenarios: {} }, null, 2) + '\n');
}
