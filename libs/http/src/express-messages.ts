import http from 'node:http';
import type { Express } from 'express';

type MessageClasses = { IncomingMessage: typeof http.IncomingMessage; ServerResponse: typeof http.ServerResponse };

/**
 * Request and response classes for `http.createServer` (its documented `IncomingMessage` and
 * `ServerResponse` options) whose objects are born with the app's express prototypes, `app.request`
 * and `app.response` (express's documented extension points, "Overriding the Express API").
 *
 * Why: express's app.handle sets the prototype of every request and response it is given to those
 * two. On objects born with node's prototypes that reshapes two live objects per request, which V8
 * pays for in the router, in every later property access and in the GC (measured on the create path:
 * about 0.1 ms of CPU per request in the gateway, and as much in booking). With the prototype already
 * in place, setting it is a no-op. The objects are node's own in every other respect: node constructs
 * them, and the prototypes inherit node's.
 * The fast path (fast-path.ts), which never calls express, gets the same objects and uses only node's
 * API on them.
 */
export function expressMessageClasses(app: Express): MessageClasses | Record<string, never> {
  // Node's two classes are ES5 constructor functions (node:_http_incoming, node:_http_server), so a
  // subclass can be made as node's own are: a function that calls the base on the new object, with the
  // prototype it should have. (Reflect.construct with another new.target works for any constructor
  // but measured 50 µs per request pair slower: V8 leaves its fast construct path.) Were they ever ES
  // classes, which cannot be called, the server keeps node's own and express reshapes as it does anyway.
  if (isClass(http.IncomingMessage) || isClass(http.ServerResponse)) return {};
  const IncomingMessage = http.IncomingMessage as unknown as (this: http.IncomingMessage, socket: unknown) => void;
  const ServerResponse = http.ServerResponse as unknown as (this: http.ServerResponse, req: unknown, options: unknown) => void;
  function ExpressRequest(this: http.IncomingMessage, socket: unknown): void {
    IncomingMessage.call(this, socket);
  }
  ExpressRequest.prototype = app.request;
  function ExpressResponse(this: http.ServerResponse, req: unknown, options: unknown): void {
    ServerResponse.call(this, req, options);
  }
  ExpressResponse.prototype = app.response;
  return { IncomingMessage: ExpressRequest as unknown as typeof http.IncomingMessage, ServerResponse: ExpressResponse as unknown as typeof http.ServerResponse };
}

function isClass(fn: unknown): boolean {
  return typeof fn === 'function' && /^class\b/.test(Function.prototype.toString.call(fn));
}
