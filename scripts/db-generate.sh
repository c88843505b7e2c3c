#!/usr/bin/env bash
# Generates a service's next migration from its drizzle schema: `pnpm db:generate booking add_bookings`.
# drizzle-kit writes a bare CREATE SCHEMA, but `pnpm migrate` provisions the schema (owned by the service
# role) before migrating, so the statement is made idempotent here.
set -euo pipefail
service=${1:?usage: pnpm db:generate <service> <name> [--custom]}; name=${2:?migration name}; shift 2
cd "$(dirname "$0")/../services/$service"
npx drizzle-kit generate --name "$name" "$@"
sed -i -E 's/^CREATE SCHEMA "([a-z_]+)";/CREATE SCHEMA IF NOT EXISTS "\1";/' migrations/*.sql
