import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface HttpMetrics {
  /** Per-app registry: services register their own metrics here; tests can build several apps. */
  registry: Registry;
  observe(labels: { method: string; route: string; status: number }, durationSeconds: number): void;
}

/** Default Node metrics plus the two request metrics, labelled by route pattern to bound cardinality. */
export function createHttpMetrics(service: string): HttpMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests handled', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration in seconds',
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return {
    registry,
    observe({ method, route, status }, seconds) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
  };
}
