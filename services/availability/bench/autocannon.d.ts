// autocannon ships no types; this is the part of its programmatic API the benchmark uses.
declare module 'autocannon' {
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
  }
  interface Result {
    latency: Histogram;
    requests: Histogram & { total: number };
    non2xx: number;
    errors: number;
    timeouts: number;
  }
  /** `duration` in seconds, or `amount`: a fixed number of requests. */
  function autocannon(opts: { url: string; connections: number; duration?: number; amount?: number; headers?: Record<string, string> }): Promise<Result>;
  export = autocannon;
}
