import { runService } from '@sched/runtime';
import { setupGateway } from './app';
import { opsPortOf, readConfig } from './config';

/**
 * The public edge: API keys, scopes and rate limits, routing to the owning services, the booking page.
 * It owns no queue: no broker, readiness is its own database (services report their broker themselves).
 * Probes and the scrape use the operations port (deploy/README.md, "Network").
 */
void runService({
  name: 'gateway',
  config: readConfig(),
  broker: false,
  // All API: PROCESS_ROLE=worker is a start-up error (its config refuses it first).
  background: false,
  access: 'public',
  opsPort: opsPortOf,
  setup: (ctx) => setupGateway(ctx),
}).catch(() => process.exit(1));
