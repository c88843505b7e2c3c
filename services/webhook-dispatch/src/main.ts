import { runService } from '@sched/runtime';
import { setupWebhookDispatch } from './app';
import { readConfig } from './config';
import { WEBHOOK_DISPATCH_ACCESS } from './http/access';

/** Owns webhook endpoints, deliveries and attempts; consumes the public events and sends them. */
void runService({
  name: 'webhook-dispatch',
  config: readConfig(),
  // Its work is consuming and sending: without the broker it cannot do its job.
  brokerCritical: true,
  access: WEBHOOK_DISPATCH_ACCESS,
  setup: (ctx) => setupWebhookDispatch(ctx),
}).catch(() => process.exit(1));
