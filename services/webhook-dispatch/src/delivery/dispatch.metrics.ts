import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface DispatchMetrics {
  attempt(result: string, latencyMs: number): void;
  finished(status: 'succeeded' | 'failed' | 'gone', sinceCreatedMs: number | null): void;
  deadLettered(): void;
}

/**
 * What on-call watches (docs/operations.md): attempts by result, deliveries finished, dead letters,
 * and, read from the database at scrape time, how many deliveries wait and how old the oldest is.
 */
export function createDispatchMetrics(registry: Registry, backlog: () => Promise<{ pending: number; oldestPendingSeconds: number }>): DispatchMetrics {
  const attempts = new Counter({
    name: 'webhook_attempts_total',
    help: 'Webhook HTTP attempts by result: success or the error kind (http_status, timeout, connection, dns, address_not_allowed, ...).',
    labelNames: ['result'],
    registers: [registry],
  });
  const attemptSeconds = new Histogram({
    name: 'webhook_attempt_duration_seconds',
    help: 'Duration of one webhook HTTP attempt.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const finished = new Counter({
    name: 'webhook_deliveries_finished_total',
    help: 'Deliveries that reached a final state: succeeded, failed (retries exhausted) or gone (receiver answered 410).',
    labelNames: ['status'],
    registers: [registry],
  });
  const deliverySeconds = new Histogram({
    name: 'webhook_delivery_seconds',
    help: 'From the delivery being recorded (event consumed) to the receiver answering 2xx, retries included.',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 300, 3600, 36000],
    registers: [registry],
  });
  const deadLetters = new Counter({
    name: 'webhook_dead_letters_total',
    help: 'Failed deliveries published to the webhook-dispatch DLQ.',
    registers: [registry],
  });
  let lastBacklog: Promise<{ pending: number; oldestPendingSeconds: number }> | undefined;
  const readBacklog = () => (lastBacklog ??= backlog().finally(() => (lastBacklog = undefined)));
  new Gauge({
    name: 'webhook_deliveries_pending',
    help: 'Deliveries waiting for their next attempt (all workspaces).',
    registers: [registry],
    async collect() {
      this.set((await readBacklog()).pending);
    },
  });
  new Gauge({
    name: 'webhook_oldest_pending_seconds',
    help: 'Age of the oldest pending delivery; grows when receivers are down or the worker is stuck.',
    registers: [registry],
    async collect() {
      this.set((await readBacklog()).oldestPendingSeconds);
    },
  });

  return {
    attempt(result, latencyMs) {
      attempts.inc({ result });
      attemptSeconds.observe(latencyMs / 1000);
    },
    finished(status, sinceCreatedMs) {
      finished.inc({ status });
      if (status === 'succeeded' && sinceCreatedMs !== null) deliverySeconds.observe(sinceCreatedMs / 1000);
    },
    deadLettered() {
      deadLetters.inc();
    },
  };
}
