#!/usr/bin/env bash
# Brings a machine of this kind (Debian, Node 20) to what the project needs, doing only what is missing:
# pnpm, workspace dependencies, PostgreSQL and RabbitMQ running, Radicale, docker-compose and Chromium installed. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "[setup] $*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else "$@"; fi; }

if ! command -v pnpm >/dev/null 2>&1; then
  log "installing pnpm (npm install -g pnpm@10)"
  npm install -g pnpm@10 >/dev/null 2>&1 || as_root npm install -g pnpm@10 >/dev/null
fi

if [ ! -f node_modules/.modules.yaml ] || [ pnpm-lock.yaml -nt node_modules/.modules.yaml ]; then
  log "installing dependencies (pnpm install --frozen-lockfile)"
  pnpm install --frozen-lockfile --reporter=append-only 2>&1 | grep -vE '^(Progress|Packages):' | tail -5
fi

tcp_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() {
  local port=$1 what=$2
  for _ in $(seq 1 120); do tcp_open "$port" && return 0; sleep 0.5; done
  echo "[setup] $what did not open port $port within 60 s" >&2; return 1
}

if ! tcp_open 5432; then
  log "starting PostgreSQL"
  as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
  wait_port 5432 PostgreSQL
fi
for _ in $(seq 1 60); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done

if ! tcp_open 5672; then
  log "starting RabbitMQ"
  as_root rabbitmq-server -detached
  wait_port 5672 RabbitMQ
fi

if ! command -v radicale >/dev/null 2>&1; then
  log "installing Radicale (apt-get install -y radicale)"
  as_root apt-get install -y -qq radicale >/dev/null 2>&1 || { as_root apt-get update -qq >/dev/null && as_root apt-get install -y -qq radicale >/dev/null; }
fi
if ! command -v docker-compose >/dev/null 2>&1; then
  log "installing docker-compose (apt-get install -y docker-compose; used to validate docker-compose.yml)"
  as_root apt-get install -y -qq docker-compose >/dev/null 2>&1 || { as_root apt-get update -qq >/dev/null && as_root apt-get install -y -qq docker-compose >/dev/null; }
fi
if ! command -v chromium >/dev/null 2>&1; then
  log "installing Chromium (apt-get install -y chromium; the booking page's browser tests drive it)"
  as_root apt-get install -y -qq chromium >/dev/null 2>&1 || { as_root apt-get update -qq >/dev/null && as_root apt-get install -y -qq chromium >/dev/null; }
fi
log "ready: pnpm $(pnpm --version), PostgreSQL :5432, RabbitMQ :5672, $(radicale --version 2>/dev/null | head -1 | sed 's/^/Radicale /')"
