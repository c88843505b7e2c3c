/**
 * Writes docs/resilience.md from the figures of the last `pnpm test:resilience` run (.data/resilience.json)
 * and, when present, the fuzz run (.data/fuzz.json). Run: `node --import tsx tests-e2e/resilience/report.ts`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const RESILIENCE = path.join(ROOT, '.data', 'resilience.json');
const FUZZ = path.join(ROOT, '.data', 'fuzz.json');
const OUT = path.join(ROOT, 'docs', 'resilience.md');

type Figures = Record<string, unknown>;

const SCENARIOS: { key: string; title: string; what: string; proves: string[] }[] = [
  {
    key: 'broker_outage',
    title: 'Broker outage',
    what: 'RabbitMQ is stopped (`rabbitmqctl stop_app`: listener and every connection gone) for 30 s while 500 Bookings are created, 8 at a time, then started again.',
    proves: [
      'every create answers 201 while the broker is down: the API never waits on RabbitMQ, the events wait in the outbox;',
      'after the broker returns, every `booking.created` webhook arrives, exactly one webhook-id per Booking at the receiver (after its dedupe by webhook-id);',
      'every Booking reaches `calendar.status` `synced`, with exactly one event in Radicale, and the outbox is empty.',
    ],
  },
  {
    key: 'service_crash',
    title: 'Service crash',
    what: 'calendar-sync and webhook-dispatch are killed with SIGKILL (no clean stop) while 200 creates run and both are busy catching up, then restarted 3 s later.',
    proves: [
      'nothing is lost: every Booking is synced and both its webhooks (`booking.created`, `calendar.created`) arrive, one webhook-id each;',
      'no duplicate calendar event: one VEVENT per Booking in Radicale, whatever was in flight at the kill;',
      'while calendar-sync is down, creates fail closed with `503 calendar_unavailable` (no busy times), which the client retries.',
    ],
  },
  {
    key: 'postgres_restart',
    title: 'PostgreSQL restart',
    what: 'PostgreSQL is shut down (fast mode: every session ended, as in a restart or failover) for 8 s under 4 concurrent creators, then started again.',
    proves: [
      'while it is down every request that fails gets `503 service_unavailable` with `Retry-After` and the error envelope (decisions.md §2): no `500` at all, never a hang and never a stack trace;',
      'no service process dies of it, and creates succeed again by themselves once it is back;',
      'no corrupted or half-written Booking: every 201 exists, every row is complete, and every Booking has exactly one `booking.created` outbox event (and no event lacks its Booking).',
    ],
  },
  ...providerOutages(),
];

/** The provider outage scenario, once per provider (provider-outage.resilience.ts records `provider_outage_<provider>`). */
function providerOutages(): typeof SCENARIOS {
  const providers = [
    { key: 'caldav', name: 'CalDAV', down: 'Radicale (CalDAV) is stopped.' },
    {
      key: 'google',
      name: 'Google Calendar',
      down: "The Google fake (libs/testing/src/providers/fake-google.ts: Calendar API v3 and the OAuth endpoints) stops listening. The host's calendar was connected through the system's OAuth flow (admin API → consent → the gateway's `/oauth/callback`).",
    },
    {
      key: 'microsoft',
      name: 'Microsoft 365',
      down: "The Microsoft fake (fake-microsoft.ts: Graph v1.0 and the identity platform, over HTTPS) stops listening and drops its connections. The host's calendar was connected through the system's OAuth flow.",
    },
  ];
  return providers.map((p) => ({
    key: `provider_outage_${p.key}`,
    title: `Calendar provider outage: ${p.name}`,
    what: `${p.down} \`BUSY_FRESHNESS_MS=3000\`; Slots and creates are probed until the provider is started again (same port) and after.`,
    proves: [
      'Slots and creates fail closed with `503 calendar_unavailable` once the busy snapshot is older than the freshness bound (before that the last good snapshot answers), and stay closed while the provider is down;',
      "both recover by themselves when the provider returns, and the Bookings taken meanwhile get their calendar events (write retries): one event per Booking in the provider's calendar;",
      "a busy hour of the host's own in that calendar is left out of every Slots answer, before and after the outage.",
    ],
  }));
}

const fmt = (v: unknown): string => {
  if (v === undefined || v === null) return '–';
  if (typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>);
    return entries.length ? entries.map(([k, n]) => `${k}: ${String(n)}`).join(', ') : '–';
  }
  return String(v);
};

const pick = (f: Figures, ...keys: string[]): unknown => keys.map((k) => f[k]).find((v) => v !== undefined);

function summaryTable(scenarios: Record<string, Figures>): string {
  const rows = SCENARIOS.filter((s) => scenarios[s.key]).map((s) => {
    const f = scenarios[s.key]!;
    const duplicates = ['calendar_duplicates', 'bookings_without_exactly_one_booking_created', 'bookings_without_exactly_one_calendar_created', 'incomplete_bookings', 'bookings_without_exactly_one_created_event']
      .map((k) => f[k])
      .filter((v): v is number => typeof v === 'number');
    return `| ${s.title} | ${fmt(f.fault)} | ${fmt(f.requests)} | ${fmt(f.answers ?? pick(f, 'create_answers_while_down'))} | ${fmt(f['5xx_during_outage'] ?? f['5xx_during_crash'])} | ${fmt(f['5xx_after_outage'] ?? f['5xx_after_crash'])} | ${fmt(f.bookings_lost ?? 0)} | ${duplicates.reduce((a, b) => a + b, 0)} |`;
  });
  return [
    '| Scenario | Fault injected | Requests | Answers | 5xx during fault | 5xx after | Bookings lost | Duplicates / inconsistencies |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

function scenarioSection(s: (typeof SCENARIOS)[number], f: Figures | undefined): string {
  const lines = [`## ${s.title}`, '', s.what, '', 'What the test asserts:', '', ...s.proves.map((p) => `- ${p}`), ''];
  if (!f) return [...lines, '_Not in the last run._', ''].join('\n');
  lines.push('| Figure | Value |', '|---|---|');
  for (const [k, v] of Object.entries(f)) if (k !== 'recordedAt') lines.push(`| ${k.replace(/_/g, ' ')} | ${fmt(v)} |`);
  lines.push('');
  return lines.join('\n');
}

/** Samples and log excerpts stay in the JSON file: they are long, and they carry the run's (throwaway) credentials. */
const listCell = (v: unknown[]): string =>
  v.length === 0 ? '–' : v.some((x) => x !== null && typeof x === 'object') ? `${v.length} (in .data/fuzz.json)` : v.map(String).join(', ');

function fuzzSection(): string {
  if (!existsSync(FUZZ)) return '## Fuzzing\n\n_No `.data/fuzz.json` (run the fuzz suite to include its figures)._\n';
  const fuzz = JSON.parse(readFileSync(FUZZ, 'utf8')) as Record<string, unknown>;
  const lines = ['## Fuzzing', '', 'Figures of the last fuzz run (`.data/fuzz.json`).', '', '| Figure | Value |', '|---|---|'];
  const walk = (obj: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(obj)) {
      const name = prefix ? `${prefix}.${k}` : k;
      if (v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).some((x) => x && typeof x === 'object')) walk(v as Record<string, unknown>, name);
      else lines.push(`| ${name} | ${Array.isArray(v) ? listCell(v) : fmt(v)} |`);
    }
  };
  walk(fuzz, '');
  return lines.join('\n') + '\n';
}

function main(): void {
  if (!existsSync(RESILIENCE)) {
    console.error(`no ${path.relative(ROOT, RESILIENCE)}: run \`pnpm test:resilience\` first`);
    process.exit(1);
  }
  const data = JSON.parse(readFileSync(RESILIENCE, 'utf8')) as { startedAt?: string; generatedAt?: string; scenarios?: Record<string, Figures> };
  const scenarios = data.scenarios ?? {};
  const doc = [
    '# Resilience',
    '',
    '<!-- Generated by `node --import tsx tests-e2e/resilience/report.ts` from .data/resilience.json (and .data/fuzz.json). Do not edit by hand. -->',
    '',
    `Figures of the resilience run started ${data.startedAt ?? data.generatedAt ?? 'at an unknown time'} (\`pnpm test:resilience\`).`,
    '',
    'The suite (tests-e2e/resilience) runs the whole system as separate processes on loopback, exactly as',
    '`npm start` runs it (tests-e2e/support/system.ts), with fast retry schedules',
    '(`CALENDAR_WRITE_RETRY_DELAYS_MS`, `WEBHOOK_RETRY_SCHEDULE_MS`) so that recoveries happen within minutes.',
    'Each scenario starts its **own disposable PostgreSQL cluster and RabbitMQ node** (tests-e2e/support/private-infra.ts:',
    '`initdb` + `pg_ctl` on a free port; `rabbitmq-server -detached` with its own node name, ports, data folder, config',
    'and Erlang cookie) and breaks those; the shared servers of the machine are never stopped. Radicale is the',
    'private one every system starts; Google Calendar and Microsoft 365 are the local fakes of libs/testing',
    '(src/providers), started per scenario. Webhooks go to a receiver that verifies every signature with the client',
    'library and records every delivery, duplicates included.',
    '',
    summaryTable(scenarios),
    '',
    '"Duplicates / inconsistencies" adds up: calendar events beyond one per Booking, Bookings without exactly one',
    'distinct webhook-id per expected webhook, incomplete Booking rows and Bookings without exactly one outbox event.',
    'Redeliveries of the same webhook-id (at-least-once delivery) are listed per scenario and are allowed: the',
    'receiver dedupes by webhook-id.',
    '',
    ...SCENARIOS.map((s) => scenarioSection(s, scenarios[s.key])),
    '## Findings',
    '',
    '- **Fixed: a PostgreSQL restart killed booking, calendar-sync and webhook-dispatch.** pg-pool listens for',
    '  `error` only on idle clients. When Postgres ends its sessions (57P01 `terminating connection due to',
    '  administrator command`), a client checked out between two queries of a transaction emitted an unhandled',
    '  `error`, which ran the `uncaughtException` handler and stopped the process; the gateway then answered',
    '  `502 upstream_unavailable` until someone restarted the services. libs/db `createPool` now attaches an',
    '  `error` listener to every client it connects (the failing query reports the error; the pool discards the',
    '  broken client on release). The Postgres scenario asserts that no service process exits.',
    '- **Fixed: while PostgreSQL was down the API answered `500 internal_error`.** decisions.md §2 now has',
    '  `503 service_unavailable` for a store that is unreachable: libs/db `storeUnavailable` recognises the',
    '  connection failures (refused, reset, `57P01` and the other shutdown codes, pool connect timeout) and the one',
    '  error middleware answers them with `503` and `Retry-After: 5`, logged at warn. The Postgres scenario asserts',
    '  that no answer is a 500 and that every failed answer of the outage is `503 service_unavailable` with',
    '  `Retry-After`. Clients retry it with the same Idempotency-Key.',
    '- While calendar-sync is down, creates and Slots answer `503 calendar_unavailable` (fail closed): availability',
    '  cannot read busy times. This is by design (decisions.md §8).',
    '',
    fuzzSection(),
  ].join('\n');
  writeFileSync(OUT, doc);
  console.log(`wrote ${path.relative(ROOT, OUT)} (${Object.keys(scenarios).length} scenarios${existsSync(FUZZ) ? ', fuzz figures' : ''})`);
}

main();
