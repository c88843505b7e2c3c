import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { DomainError } from '@sched/contracts';
import type { Logger } from '@sched/logger';
import { errorBody } from './envelope';
import { newRequestId } from './request-context';

/** What Node's HTTP parser refuses before a request exists, as a status and an error of the contract. */
function answerFor(code: string | undefined): { status: number; error: DomainError } | undefined {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      // Over the server's maxHeaderSize (Node's 16 KiB): request line and headers together.
      return {
        status: 431,
        error: new DomainError('invalid_request', {
          message: 'The request headers are too large.',
          details: [{ field: 'headers', issue: 'too_long' }],
          status: 431,
        }),
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, error: new DomainError('payload_too_large') };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return undefined; // 408: no code of the contract fits; Node's own bare answer (below)
    default:
      return { status: 400, error: new DomainError('invalid_request', { message: 'The request is not valid HTTP.' }) };
  }
}

const answered = new WeakSet<Duplex>();

/**
 * The responses of each connection, oldest first, so that the one the connection is writing (the
 * oldest unfinished one, as Node keeps it internally) is known through public API only: the server's
 * 'request' event and each response's writableFinished.
 */
function trackResponses(server: Server): (socket: Duplex) => ServerResponse | undefined {
  const bySocket = new WeakMap<Duplex, ServerResponse[]>();
  server.on('request', (req, res: ServerResponse) => {
    const list = bySocket.get(req.socket);
    if (!list) {
      bySocket.set(req.socket, [res]);
      return;
    }
    while (list.length > 0 && list[0]!.writableFinished) list.shift();
    list.push(res);
  });
  return (socket) => bySocket.get(socket)?.find((res) => !res.writableFinished);
}

/**
 * Answers what Node answers by itself to a request its parser refuses (a bare `431` for headers over
 * the limit, a bare `400` for what is not HTTP) with the error envelope instead, X-Request-Id and
 * `meta.request_id` as on every other answer. As Node's own handler: only when the response the
 * connection is writing has not started, and the connection is then closed.
 */
export function answerClientErrors(server: Server, logger: Logger): void {
  const inFlight = trackResponses(server);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (answered.has(socket)) return;
    answered.add(socket);
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight(socket)?.headersSent) {
      socket.destroy();
      return;
    }
    const answer = answerFor(err.code);
    if (!answer) {
      socket.end(`HTTP/1.1 408 ${STATUS_CODES[408]}\r\nConnection: close\r\n\r\n`);
      return;
    }
    const requestId = newRequestId();
    const body = JSON.stringify(errorBody(answer.error, requestId));
    logger.info('http request refused by the parser', { code: err.code, status: answer.status, request_id: requestId });
    socket.end(
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
    // Whatever the client still sends is read and dropped, so that closing does not reset the
    // connection before it has read the answer; the socket goes when the client closes, or after 1 s.
    socket.on('data', () => undefined);
    socket.resume();
    const timer = setTimeout(() => socket.destroy(), 1000);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}
