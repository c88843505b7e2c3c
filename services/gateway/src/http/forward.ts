import { isUtf8 } from 'node:buffer';
import type { Request, RequestHandler, Response } from 'express';
import { idempotencyHeader, onBehalfOf, requestContext, toUpstreamDomainError, UpstreamError, writesPlainBody, type ForwardClient } from '@sched/http';

/** Headers of a service's answer that the caller should see; the gateway sets its own request id and rate headers. */
const PASSED_BACK = ['content-type', 'retry-after', 'idempotent-replayed', 'allow', 'location', 'www-authenticate'];
/** What every service answers with (express's res.json); res.send(text) would keep it exactly as it is. */
const JSON_UTF8 = 'application/json; charset=utf-8';

function forwardHeaders(req: Request): Record<string, string> {
  const headers = idempotencyHeader(requestContext(req));
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  return headers;
}

/**
 * Passes a routed request to the owning service and its answer back; no answer in time → 502/504
 * upstream_unavailable. The credential the client signs acts for whom the auth step found (API key
 * and scopes, or the operator), in the workspace of the path where `workspaceParam` names one.
 */
export function forwardTo(client: ForwardClient, opts: { workspaceParam?: string } = {}): RequestHandler {
  return async (req: Request, res: Response, next) => {
    try {
      const workspaceId = opts.workspaceParam ? String(req.params[opts.workspaceParam]) : undefined;
      const upstream = await client.request(req.method, req.originalUrl, {
        headers: forwardHeaders(req),
        onBehalf: onBehalfOf({ workspaceId }),
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
      });
      for (const name of PASSED_BACK) {
        const v = upstream.headers[name];
        if (v !== undefined) res.setHeader(name, v);
      }
      const { status, body } = upstream;
      // The usual answer (a service's JSON in valid UTF-8) is passed on as the bytes received, as
      // res.send(text) would have sent them: no decoding into a string and re-encoding per request.
      if (upstream.headers['content-type'] === JSON_UTF8 && writesPlainBody(res, status) && isUtf8(body)) {
        res.status(status);
        // Set again as res.send does, so even the header's spelling on the wire stays the same.
        res.setHeader('Content-Type', JSON_UTF8);
        res.setHeader('Content-Length', String(body.length));
        res.end(body);
        return;
      }
      // Anything else as text, as before: res.send(string) adds `charset=utf-8` to the passed
      // content-type (text/html when there is none), so answers stay byte for byte what they were.
      res.status(status).send(body.toString('utf8'));
    } catch (err) {
      next(err instanceof UpstreamError ? toUpstreamDomainError(err) : err);
    }
  };
}
