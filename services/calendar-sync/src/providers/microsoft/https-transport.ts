import https from 'node:https';

/** What the Microsoft adapter sends: a text body at most, and the operation's AbortSignal. */
export interface TransportRequest {
  method: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export type HttpsTransport = ((url: string, init: TransportRequest) => Promise<Response>) & { close(): void };

export interface HttpsTransportOptions {
  /**
   * Certificates to trust instead of the system's roots: tests pass the throwaway CA of their local
   * fake; production leaves it unset. Only this transport trusts them (nothing global changes).
   */
  ca?: string | Buffer;
}

const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * The one way both SDKs reach Microsoft (MSAL's `system.networkClient`, the Graph client's last
 * middleware): node:https with a keep-alive agent. HTTPS only, so neither SDK can be pointed at a
 * plain-HTTP endpoint with a bearer token or a client secret. Answers are read whole (they are small
 * JSON documents) and handed back as a standard Response; the AbortSignal ends the request at once.
 */
export function createHttpsTransport(opts: HttpsTransportOptions = {}): HttpsTransport {
  const agent = new https.Agent({ keepAlive: true, ca: opts.ca, maxSockets: 16 });
  const send = (url: string, init: TransportRequest): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const target = new URL(url);
      if (target.protocol !== 'https:') {
        reject(new TypeError(`refusing a non-https URL (${target.protocol})`));
        return;
      }
      if (init.signal?.aborted) {
        reject(init.signal.reason);
        return;
      }
      const headers: Record<string, string> = { ...init.headers };
      if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
      const req = https.request(target, { method: init.method, headers, agent, signal: init.signal }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 599) {
            reject(new TypeError(`unexpected HTTP status ${status}`));
            return;
          }
          const out = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined) continue;
            for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
          }
          resolve(new Response(NO_BODY.has(status) ? null : Buffer.concat(chunks), { status, headers: out }));
        });
      });
      req.on('error', reject);
      req.end(init.body);
    });
  return Object.assign(send, { close: () => agent.destroy() });
}
