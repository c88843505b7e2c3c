// The NetworkPolicy part of `pnpm deploy:check` (deploy/README.md, "Network"): from the policies,
// which pod may open a connection to which pod or address on which port, compared with the edge table
// below; every edge the policies allow must be in it, and every edge in it must be allowed. Plus: a
// default-deny for both directions, and internet egress that excepts the private, shared and
// link-local ranges (the cloud metadata address 169.254.169.254 among them).
//
// Semantics (kubernetes.io/docs/concepts/services-networking/network-policies): a pod selected by a
// policy of a direction is isolated in that direction and allowed the union of those policies' rules;
// a pod-to-pod connection needs the caller's egress and the callee's ingress. ipBlocks are taken as
// addresses outside the cluster (whether they also match pod IPs depends on the CNI; the except
// check keeps the private ranges, where pods and Services live, out of them).

const NAME = 'app.kubernetes.io/name';

/** The placeholder addresses of network-policies.yaml; an overlay with real ones changes this too. */
export const DATASTORES = { '192.0.2.0/24': 'postgres', '198.51.100.0/24': 'rabbitmq' };

const INTERNET = { '0.0.0.0/0': 'internet (IPv4)', '::/0': 'internet (IPv6)' };

/** Ranges no internet egress may reach: RFC 1918, CGNAT (RFC 6598), link-local (metadata), IPv6 ULA and link-local. */
export const NOT_INTERNET = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16', 'fc00::/7', 'fe80::/10'];

const SERVICES = ['gateway', 'booking', 'availability', 'invitation', 'calendar-sync', 'webhook-dispatch'];
/** The background work of each service but the gateway, its own Deployment (PROCESS_ROLE=worker). */
const WORKERS = ['booking-worker', 'availability-worker', 'invitation-worker', 'calendar-sync-worker', 'webhook-dispatch-worker'];
const METRICS_PORT = {
  gateway: 9080,
  booking: 8081,
  availability: 8082,
  invitation: 8083,
  'calendar-sync': 8084,
  'webhook-dispatch': 8085,
  // A worker's port (its service's + 100) serves /healthz, /readyz and /metrics only.
  'booking-worker': 8181,
  'availability-worker': 8182,
  'invitation-worker': 8183,
  'calendar-sync-worker': 8184,
  'webhook-dispatch-worker': 8185,
};

/** Who may connect to whom: `<from> -> <to>:<port>/<protocol>`. docs/architecture.md and each service's *_URL settings. */
export const EXPECTED_EDGES = [
  // The public door, and the gateway routing to every service.
  'ingress-nginx/controller -> gateway:8080/TCP',
  'gateway -> booking:8081/TCP',
  'gateway -> availability:8082/TCP',
  'gateway -> invitation:8083/TCP',
  'gateway -> calendar-sync:8084/TCP',
  'gateway -> webhook-dispatch:8085/TCP',
  // Service to service (AVAILABILITY_URL, BOOKING_URL, CALENDAR_SYNC_URL in their config.ts).
  'booking -> availability:8082/TCP', // slot check at create/reschedule
  'invitation -> booking:8081/TCP', // page bookings
  'invitation -> availability:8082/TCP', // event types, slots
  'availability -> calendar-sync:8084/TCP', // busy times
  'calendar-sync -> availability:8082/TCP', // host lookup
  'calendar-sync-worker -> availability:8082/TCP', // host lookup of the calendar writes and refreshes
  // Outside: calendar providers (busy reads of the API, writes and refreshes of the worker) and webhook
  // receivers (the worker's sends; webhook-dispatch's admin API connects to nothing outside).
  'calendar-sync -> internet (IPv4):*/TCP',
  'calendar-sync -> internet (IPv6):*/TCP',
  'calendar-sync-worker -> internet (IPv4):*/TCP',
  'calendar-sync-worker -> internet (IPv6):*/TCP',
  'webhook-dispatch-worker -> internet (IPv4):*/TCP',
  'webhook-dispatch-worker -> internet (IPv6):*/TCP',
  // Postgres: every service and worker and the migration Job; RabbitMQ: every one but the gateway.
  ...[...SERVICES, ...WORKERS, 'migrate'].map((s) => `${s} -> postgres:5432/TCP`),
  ...[...SERVICES, ...WORKERS].filter((s) => s !== 'gateway').flatMap((s) => [`${s} -> rabbitmq:5671/TCP`, `${s} -> rabbitmq:5672/TCP`]),
  // The scrape, on the port that serves /metrics (the gateway's ops port, a worker's port).
  ...[...SERVICES, ...WORKERS].map((s) => `monitoring/prometheus -> ${s}:${METRICS_PORT[s]}/TCP`),
  // DNS for every pod, including one nobody declared (kubectl run in the namespace).
  ...[...SERVICES, ...WORKERS, 'migrate', '(other pod)'].flatMap((s) => [`${s} -> kube-system/kube-dns:53/UDP`, `${s} -> kube-system/kube-dns:53/TCP`]),
];

/** Namespaces outside ours that the policies' selectors may name, each with a pod they mean and one they do not. */
const OUTSIDE = [
  { ns: 'ingress-nginx', pods: [{ name: 'controller', labels: { [NAME]: 'ingress-nginx' } }] },
  { ns: 'monitoring', pods: [{ name: 'prometheus', labels: { [NAME]: 'prometheus' } }] },
  { ns: 'kube-system', pods: [{ name: 'kube-dns', labels: { 'k8s-app': 'kube-dns' } }] },
  { ns: 'elsewhere', pods: [] },
];

function world(objects, namespace) {
  const own = objects
    .filter((o) => o.kind === 'Deployment' || o.kind === 'Job')
    .map((o) => {
      const template = o.spec?.template ?? {};
      const labels = template.metadata?.labels ?? {};
      const ports = (template.spec?.containers ?? []).flatMap((c) => (c.ports ?? []).map((p) => ({ name: p.name, number: p.containerPort, protocol: p.protocol ?? 'TCP' })));
      return { name: labels[NAME] ?? o.metadata.name, labels, ports, own: true };
    });
  own.push({ name: '(other pod)', labels: { run: 'debug' }, ports: [], own: true });
  const namespaces = [
    { labels: { 'kubernetes.io/metadata.name': namespace }, pods: own },
    ...OUTSIDE.map(({ ns, pods }) => ({
      labels: { 'kubernetes.io/metadata.name': ns },
      pods: [...pods, { name: '(other pod)', labels: { run: 'other' } }].map((p) => ({ ...p, name: `${ns}/${p.name}`, ports: [], own: false })),
    })),
  ];
  return { own, namespaces, all: namespaces.flatMap((n) => n.pods) };
}

function matches(selector, labels) {
  for (const [k, v] of Object.entries(selector?.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector?.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const inValues = has && (e.values ?? []).includes(labels[e.key]);
    if (e.operator === 'In' && !inValues) return false;
    if (e.operator === 'NotIn' && inValues) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

const isEmptySelector = (s) => !s || (Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0);
const typesOf = (p) => p.spec?.policyTypes ?? ['Ingress', ...(p.spec?.egress ? ['Egress'] : [])];

/** The rules that apply to a pod in one direction, or null when no policy isolates it (everything allowed). */
function rulesFor(pod, direction, policies) {
  const selecting = policies.filter((p) => matches(p.spec?.podSelector, pod.labels) && typesOf(p).includes(direction));
  if (selecting.length === 0) return null;
  return selecting.flatMap((p) => (direction === 'Ingress' ? p.spec.ingress : p.spec.egress) ?? []);
}

/** The pods a selector peer means (ipBlock peers: none). */
function podsOf(peer, w) {
  if (peer.ipBlock) return [];
  const namespaces = peer.namespaceSelector ? w.namespaces.filter((n) => matches(peer.namespaceSelector, n.labels)) : [w.namespaces[0]];
  return namespaces.flatMap((n) => n.pods.filter((p) => matches(peer.podSelector, p.labels)));
}

const ipName = (cidr) => INTERNET[cidr] ?? DATASTORES[cidr] ?? `ip ${cidr}`;

function portAllowed(rulePorts, port) {
  if (!rulePorts?.length) return true;
  return rulePorts.some((rp) => {
    if ((rp.protocol ?? 'TCP') !== port.protocol) return false;
    if (rp.port === undefined) return true;
    if (typeof rp.port === 'string') return rp.port === port.name;
    return rp.endPort ? port.number >= rp.port && port.number <= rp.endPort : port.number === rp.port;
  });
}

const portLabels = (rulePorts) =>
  rulePorts?.length ? rulePorts.map((rp) => `${rp.port === undefined ? '*' : rp.endPort ? `${rp.port}-${rp.endPort}` : rp.port}/${rp.protocol ?? 'TCP'}`) : ['*'];

/** Whether rules (null: not isolated) let `peer` through on `port`; `side` is 'from' or 'to'. */
function allows(rules, peer, port, side, w) {
  if (rules === null) return true;
  return rules.some((r) => portAllowed(r.ports, port) && (!r[side]?.length || r[side].some((p) => podsOf(p, w).includes(peer))));
}

/** Every connection the policies allow, as `<from> -> <to>:<port>/<protocol>`. */
export function allowedEdges(objects, namespace = 'scheduling') {
  const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
  const w = world(objects, namespace);
  const edges = new Set();
  // Into our pods, on the ports they declare: from any pod (ours need their egress too) or address.
  for (const dst of w.own) {
    const ingress = rulesFor(dst, 'Ingress', policies);
    for (const port of dst.ports) {
      const at = `${dst.name}:${port.number}/${port.protocol}`;
      for (const src of w.all) {
        if (allows(ingress, src, port, 'from', w) && (!src.own || allows(rulesFor(src, 'Egress', policies), dst, port, 'to', w))) edges.add(`${src.name} -> ${at}`);
      }
      for (const r of ingress ?? [{}]) {
        if (!portAllowed(r.ports, port)) continue;
        if (!r.from?.length) edges.add(`anywhere -> ${at}`);
        for (const peer of r.from ?? []) if (peer.ipBlock) edges.add(`${ipName(peer.ipBlock.cidr)} -> ${at}`);
      }
    }
  }
  // Out of our pods to everything that is not ours: pods elsewhere and addresses.
  for (const src of w.own) {
    for (const r of rulesFor(src, 'Egress', policies) ?? [{}]) {
      const targets = !r.to?.length
        ? ['anywhere', ...w.all.filter((p) => !p.own).map((p) => p.name)]
        : r.to.flatMap((peer) => (peer.ipBlock ? [ipName(peer.ipBlock.cidr)] : podsOf(peer, w).filter((p) => !p.own).map((p) => p.name)));
      for (const t of targets) for (const port of portLabels(r.ports)) edges.add(`${src.name} -> ${t}:${port}`);
    }
  }
  return edges;
}

function parseCidr(cidr) {
  const [addr, bitsText] = String(cidr).split('/');
  const v6 = addr.includes(':');
  const width = v6 ? 128 : 32;
  const prefix = bitsText === undefined ? width : Number(bitsText);
  let value = 0n;
  if (v6) {
    const [head, tail = ''] = addr.split('::');
    const h = head ? head.split(':') : [];
    const t = addr.includes('::') ? (tail ? tail.split(':') : []) : [];
    const groups = addr.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
    for (const g of groups) value = (value << 16n) | BigInt(parseInt(g || '0', 16));
  } else {
    for (const o of addr.split('.')) value = (value << 8n) | BigInt(Number(o));
  }
  return { v6, width, prefix, value };
}

/** Whether CIDR `outer` contains all of CIDR `inner`. */
export function cidrContains(outer, inner) {
  const a = parseCidr(outer);
  const b = parseCidr(inner);
  if (a.v6 !== b.v6 || a.prefix > b.prefix) return false;
  const shift = BigInt(a.width - a.prefix);
  return a.value >> shift === b.value >> shift;
}

/** Problems of the policies in `objects` (a built base or overlay), each prefixed with `where`. */
export function checkNetworkPolicies(objects, where, namespace = 'scheduling') {
  const problems = [];
  const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
  const denyAll = policies.some(
    (p) => isEmptySelector(p.spec?.podSelector) && typesOf(p).includes('Ingress') && typesOf(p).includes('Egress') && !p.spec.ingress?.length && !p.spec.egress?.length,
  );
  if (!denyAll) problems.push(`${where}: no default-deny NetworkPolicy (podSelector {}, policyTypes [Ingress, Egress], no rules)`);

  // Egress to an address range wider than a private one must except that range.
  for (const p of policies) {
    for (const r of p.spec?.egress ?? []) {
      for (const peer of r.to ?? []) {
        if (!peer.ipBlock) continue;
        const { cidr, except = [] } = peer.ipBlock;
        for (const range of NOT_INTERNET) {
          if (cidrContains(cidr, range) && cidr !== range && !except.some((e) => cidrContains(e, range))) {
            problems.push(`${where}: NetworkPolicy/${p.metadata.name} allows egress to ${cidr} without excepting ${range}`);
          }
        }
      }
    }
  }

  const allowed = allowedEdges(objects, namespace);
  const expected = new Set(EXPECTED_EDGES);
  for (const e of [...allowed].sort()) if (!expected.has(e)) problems.push(`${where}: NetworkPolicies allow an edge the architecture does not have: ${e}`);
  for (const e of EXPECTED_EDGES) if (!allowed.has(e)) problems.push(`${where}: NetworkPolicies do not allow ${e}`);
  return problems;
}
