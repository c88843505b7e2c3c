// The demo's local webhook receiver: verifies each delivery's Standard Webhooks signature with the
// endpoint's secret and prints one readable line per event (deduplicated by webhook-id, as a
// receiver should).
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

export function startWebhookReceiver({ port, getSecret, log = console.log }) {
  const seen = new Set();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const secret = getSecret();
      let event;
      try {
        event = new Webhook(secret).verify(body, req.headers);
      } catch (err) {
        log(`[webhooks] rejected a delivery: ${err.message}`);
        res.writeHead(400).end();
        return;
      }
      res.writeHead(204).end();
      const id = req.headers['webhook-id'];
      if (seen.has(id)) return log(`[webhooks] duplicate ${id} ignored`);
      seen.add(id);
      const b = event.data?.booking;
      log(`[webhooks] ${event.type} ${id}${b ? ` booking=${b.id} status=${b.status} start=${b.start_at} calendar=${b.calendar?.status}` : ''}`);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${port}/webhooks`, close: () => new Promise((r) => server.close(r)) }));
  });
}
