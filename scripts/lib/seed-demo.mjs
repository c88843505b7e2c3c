// Seeds the demo workspace once through the admin and v1 APIs, and reuses it on later starts:
// a workspace and an all-scopes API key, a host whose calendar lives in the local Radicale, a weekly
// schedule, a public and an invitation-only Event Type, an invitation, and a webhook endpoint that
// points at the local receiver started by `npm start`.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ALL_SCOPES = ['event_types:read', 'slots:read', 'bookings:read', 'bookings:write', 'booking_invitations:read', 'booking_invitations:write'];
const EVENTS = ['booking.created', 'booking.rescheduled', 'booking.cancelled', 'calendar.created', 'calendar.failed'];

async function call(gateway, token, method, path, body, expected) {
  const res = await fetch(`${gateway}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json().catch(() => ({}));
  if (expected && ![expected].flat().includes(res.status)) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(json.error ?? json)}`);
  return { status: res.status, json };
}

async function stillValid(gateway, adminToken, saved) {
  if (!saved?.workspaceId || !saved.apiKey || !saved.webhookSecret) return false;
  const ws = await call(gateway, adminToken, 'GET', `/admin/v1/workspaces/${saved.workspaceId}`);
  if (ws.status !== 200) return false;
  return (await call(gateway, saved.apiKey, 'GET', '/v1/event-types')).status === 200;
}

async function makeCalendar(radicale, user, password, name) {
  const url = `${radicale.url}/${user}/${name}/`;
  const res = await fetch(url, { method: 'MKCALENDAR', headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` } });
  if (res.status !== 201 && res.status !== 409 && res.status !== 405) throw new Error(`MKCALENDAR ${url} answered ${res.status}`);
  return url;
}

async function seed({ gateway, adminToken, radicale, webhookUrl }) {
  const admin = (method, path, body, expected) => call(gateway, adminToken, method, path, body, expected);
  // The slug `demo` gives /book/demo/intro-call; if an earlier demo holds it, the name's slug is used.
  let ws = (await admin('POST', '/admin/v1/workspaces', { name: 'Demo workspace', slug: 'demo' })).json.data;
  if (!ws?.id) ws = (await admin('POST', '/admin/v1/workspaces', { name: 'Demo workspace' }, 201)).json.data;
  const base = `/admin/v1/workspaces/${ws.id}`;
  const apiKey = (await admin('POST', `${base}/api-keys`, { name: 'demo (all scopes)', scopes: ALL_SCOPES, rate_limit: { limit: 1000, window_seconds: 10 } }, 201)).json.data.key;
  const host = (
    await admin('POST', `${base}/hosts`, { name: 'Dana Demo', email: 'dana@example.com', timezone: 'Europe/Berlin', conferencing_url_template: 'https://meet.example.com/{booking_id}' }, 201)
  ).json.data;
  const day = [{ start: '09:00', end: '17:00' }];
  await admin('PUT', `${base}/hosts/${host.id}/schedule`, { weekly: { mon: day, tue: day, wed: day, thu: day, fri: day }, overrides: [] }, 200);
  const [user, password] = Object.entries(radicale.users)[0];
  const calendarUrl = await makeCalendar(radicale, user, password, 'work');
  await admin('PUT', `${base}/hosts/${host.id}/calendar`, { provider: 'caldav', url: `${radicale.url}/`, username: user, password, calendar_url: calendarUrl }, [200, 201]);
  const intro = (
    await admin('POST', `${base}/event-types`, { host_id: host.id, name: 'Intro call', slug: 'intro-call', duration_minutes: 30, meeting_type: 'video', buffer_after_minutes: 10, minimum_notice_minutes: 60 }, 201)
  ).json.data;
  const consult = (
    await admin('POST', `${base}/event-types`, { host_id: host.id, name: 'Consultation', slug: 'consultation', duration_minutes: 60, meeting_type: 'video', access: 'invitation_only' }, 201)
  ).json.data;
  const endpoint = (await admin('POST', `${base}/webhook-endpoints`, { url: webhookUrl, events: EVENTS }, 201)).json.data;
  const invitation = (
    await call(gateway, apiKey, 'POST', '/v1/booking-invitations', { event_type_id: consult.id, expires_at: new Date(Date.now() + 30 * 86400000).toISOString(), max_uses: 5 }, 201)
  ).json.data;
  return {
    workspaceId: ws.id,
    workspaceSlug: ws.slug,
    apiKey,
    hostId: host.id,
    publicEventTypeId: intro.id,
    invitationEventTypeId: consult.id,
    invitationUrl: invitation.invitation_url,
    webhookEndpointId: endpoint.id,
    webhookSecret: endpoint.secret,
  };
}

export async function seedDemo({ gateway, adminToken, dataDir, radicale, webhookUrl, bookingPageUrl }) {
  const file = join(dataDir, 'demo.json');
  let demo = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : null;
  if (await stillValid(gateway, adminToken, demo)) {
    console.log(`[start] reusing demo workspace ${demo.workspaceId}`);
  } else {
    demo = await seed({ gateway, adminToken, radicale, webhookUrl });
    writeFileSync(file, JSON.stringify(demo, null, 2), { mode: 0o600 });
    console.log(`[start] seeded demo workspace ${demo.workspaceId}`);
  }
  const auth = `-H "Authorization: Bearer ${demo.apiKey}"`;
  const from = new Date(Date.now() + 86400000).toISOString().slice(0, 10);
  const to = new Date(Date.now() + 7 * 86400000).toISOString().slice(0, 10);
  // A real free start, so the printed create line works as it stands; its key names that start, so running
  // the line again replays the Booking, and the next `npm start` (whose first free start is another) prints a new key.
  const slots = await call(gateway, demo.apiKey, 'GET', `/v1/event-types/${demo.publicEventTypeId}/slots?from=${from}&to=${to}&timezone=Europe/Berlin`);
  const start = slots.json.data?.[0]?.start_at ?? '<a start_at from the slots>';
  return {
    ...demo,
    extraLines: [
      `Booking page:   ${bookingPageUrl}/${demo.workspaceSlug}/intro-call`,
      `Invitation:     ${demo.invitationUrl}`,
      `Webhooks:       printed below as [webhooks] lines (receiver ${webhookUrl})`,
    ],
    curls: [
      `curl -s ${auth} ${gateway}/v1/event-types`,
      `curl -s ${auth} "${gateway}/v1/event-types/${demo.publicEventTypeId}/slots?from=${from}&to=${to}&timezone=Europe/Berlin"`,
      `curl -s ${auth} -H 'Content-Type: application/json' -H 'Idempotency-Key: demo-${start}' -X POST ${gateway}/v1/bookings -d '{"event_type_id":"${demo.publicEventTypeId}","start_at":"${start}","guest":{"name":"Ada","email":"ada@example.com","timezone":"Europe/Berlin"}}'`,
    ],
  };
}
