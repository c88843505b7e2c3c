import { isUtf8 } from 'node:buffer';
import type { ServerResponse } from 'node:http';
import { idempotencyHeader, onBehalfOfRequest, requestContext, sendText, toUpstreamDomainError, UpstreamError, type FastRequest, type FastStep, type ForwardClient, type ForwardResponse } from '@sched/http';

/** Headers of a service's answer that the caller should see; the gateway sets its own request id and rate headers. */
const PASSED_BACK = ['content-type', 'retry-after', 'idempotent-replayed', 'allow', 'location', 'www-authenticate'];
function forwardHeaders(req: FastRequest): Record<string, string> {
  const headers = idempotencyHeader(requestContext(req));
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  return headers;
}

/** The service's answer passed back: the headers the caller should see, and the body. */
function passBack(upstream: ForwardResponse, res: ServerResponse): void {
  for (const name of PASSED_BACK) {
    const v = upstream.headers[name];
    if (v !== undefined) res.setHeader(name, v);
  }
  const { status, body } = upstream;
  // Passed on as text, as express's res.send(text) would (sendText): the charset set to UTF-8 in
  // the passed content-type (text/html when there is none). The usual answer, a service's JSON in
  // valid UTF-8, goes on as the bytes received: the same bytes, without decoding and re-encoding.
  sendText(res, status, isUtf8(body) ? [body] : body.toString('utf8'));
}

/** No answer in time → 502/504 upstream_unavailable; any other error as it is. */
const failed = (err: unknown): unknown => (err instanceof UpstreamError ? toUpstreamDomainError(err) : err);

/**
 * Passes a routed request to the owning service and its answer back; no answer in time → 502/504
 * upstream_unavailable. The credential the client signs acts for whom the auth step found (API key
 * and scopes, or the operator), in the workspace of the path where `workspaceParam` names one.
 * On the client's promise itself: no async function and no await of its own (each is one more
 * promise, and one more run of the async-context hook, per request).
 */
export function forwardTo(client: ForwardClient, opts: { workspaceParam?: string } = {}): FastStep {
  // On node's request and response only: the v1 fast path and the router both run it.
  return (req, res, next) => {
    let answer: Promise<ForwardResponse>;
    try {
      const workspaceId = opts.workspaceParam ? String(req.params[opts.workspaceParam]) : undefined;
      answer = client.request(req.method!, req.originalUrl ?? req.url!, {
        headers: forwardHeaders(req),
        onBehalf: onBehalfOfRequest(req, { workspaceId }),
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
      });
    } catch (err) {
      return next(failed(err));
    }
    answer.then(
      (upstream) => {
        try {
          passBack(upstream, res);
        } catch (err) {
          next(failed(err));
        }
      },
      (err: unknown) => next(failed(err)),
    );
  };
}
