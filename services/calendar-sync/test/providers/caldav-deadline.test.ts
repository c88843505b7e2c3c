import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ProviderError, type CalendarAccess, type OutgoingEvent } from '../../src/domain/calendar-provider';
import { CalDavProvider } from '../../src/providers/caldav/caldav-provider';

/**
 * The deadline of one CalDAV operation (PROVIDER_TIMEOUT_MS, all its requests together): a server that
 * never answers fails the operation as `unavailable` when it passes; an operation that finished before
 * it leaves nothing behind that aborts later (its timer is cleared, not left to fire).
 */

const TIMEOUT_MS = 300;
let server: http.Server;
let base: string;
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    if (req.url?.startsWith('/silent/')) return; // accepts, never answers
    req.on('end', () => {
      res.writeHead(201, { etag: '"e1"', connection: 'close' });
      res.end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
});

const access = (calendarPath: string): CalendarAccess => ({
  provider: 'caldav',
  url: base,
  username: 'u',
  password: 'p',
  calendarUrl: `${base}${calendarPath}`,
});

const event: OutgoingEvent = {
  uid: 'bkg_1@scheduling-service',
  objectName: 'bkg_1.ics',
  start: new Date('2026-12-01T09:00:00Z'),
  end: new Date('2026-12-01T09:30:00Z'),
  sequence: 1,
  summary: 'Meeting',
  description: 'Booked',
  location: null,
  joinUrl: null,
  video: false,
};

describe('a CalDAV operation under its deadline', () => {
  it('fails as unavailable when the server does not answer in time', async () => {
    const provider = new CalDavProvider({ timeoutMs: TIMEOUT_MS, mode: 'local' });
    try {
      const err = await provider.putEvent(access('/silent/cal/'), event).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ProviderError);
      expect(err).toMatchObject({ kind: 'unavailable', message: 'the server did not answer in time' });
    } finally {
      provider.close();
    }
  });

  it('leaves no deadline behind that aborts after the operation finished', async () => {
    const provider = new CalDavProvider({ timeoutMs: TIMEOUT_MS, mode: 'local' });
    // Every AbortSignal a listener is put on during the write (the operation's, handed to each request).
    const signals: AbortSignal[] = [];
    const add = EventTarget.prototype.addEventListener;
    const spy = jest.spyOn(EventTarget.prototype, 'addEventListener').mockImplementation(function (this: EventTarget, ...args: Parameters<EventTarget['addEventListener']>) {
      if (this instanceof AbortSignal) signals.push(this);
      return add.apply(this, args);
    });
    try {
      const written = await provider.putEvent(access('/cal/'), event);
      expect(written).toEqual({ objectUrl: `${base}/cal/bkg_1.ics`, etag: '"e1"' });
    } finally {
      spy.mockRestore();
      provider.close();
    }
    expect(signals.length).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, TIMEOUT_MS * 2));
    expect(signals.filter((s) => s.aborted)).toEqual([]);
  });
});
