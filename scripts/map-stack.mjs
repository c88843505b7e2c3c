#!/usr/bin/env node
// Maps a stack trace logged by a service back to the TypeScript sources (docs/operations.md, "Stack traces").
//
// The services run without --enable-source-maps (scripts/lib/services.mjs SERVICE_NODE_ARGS), so a logged
// stack names positions in the bundle, e.g. `at handle (/app/services/booking/dist/main.js:114703:12)`.
// This reads text on stdin (a stack as printed, or JSON log lines: their `stack` field is mapped) and prints
// it with every `services/<service>/dist/main.js:<line>:<column>` replaced by the source position, using the
// map `pnpm build` writes beside each bundle (services/<service>/dist/main.js.map). Run it in a checkout of
// the same commit as the process that logged the stack, after `pnpm build` (esbuild's output is
// deterministic: the same sources give the same bundle and map).
//
//   grep '"request_id":"req_…"' booking.log | node scripts/map-stack.mjs
//   node scripts/map-stack.mjs < stack.txt
//
// Node's own source-map reader (node:module SourceMap) does the mapping: no dependency, and the script also
// runs where only the bundles are (DIST_ROOT=/app node map-stack.mjs, if the script is copied there).
import { SourceMap } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const root = process.env.DIST_ROOT ? resolve(process.env.DIST_ROOT) : join(dirname(fileURLToPath(import.meta.url)), '..');
const FRAME = /(?:[^\s()]*\/)?services\/([a-z][a-z-]*)\/dist\/main\.js:(\d+):(\d+)/g;
const maps = new Map();

/** The parsed map of a service's bundle (parsed once), or null when there is none. */
function mapOf(service) {
  if (!maps.has(service)) {
    const file = join(root, 'services', service, 'dist', 'main.js.map');
    maps.set(service, existsSync(file) ? { file, map: new SourceMap(JSON.parse(readFileSync(file, 'utf8'))) } : null);
  }
  return maps.get(service);
}

/** One bundle position as its source position (relative to the repository), or the text unchanged. */
function mapFrame(text, service, line, column) {
  const found = mapOf(service);
  if (!found) return text;
  // Stack positions are 1-based; SourceMap#findEntry takes and gives 0-based ones.
  const entry = found.map.findEntry(Number(line) - 1, Number(column) - 1);
  if (!entry || entry.originalSource === undefined) return text;
  const source = entry.originalSource.startsWith('file:') ? fileURLToPath(entry.originalSource) : resolve(dirname(found.file), entry.originalSource);
  return `${relative(root, source)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
}

export function mapStack(text) {
  return text.replace(FRAME, (whole, service, line, column) => mapFrame(whole, service, line, column));
}

function mapLine(line) {
  if (line.trimStart().startsWith('{')) {
    try {
      const record = JSON.parse(line);
      if (typeof record.stack === 'string') return `${record.message ?? ''}\n${mapStack(record.stack)}`;
    } catch {
      /* not JSON: map it as text */
    }
  }
  return mapStack(line);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.stdin.isTTY) console.error('map-stack: paste a stack trace or log lines, then Ctrl-D');
  for await (const line of createInterface({ input: process.stdin })) console.log(mapLine(line));
}
