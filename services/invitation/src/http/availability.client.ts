import { DomainError, internalEventTypeSchema, slotSchema, type Slot } from '@sched/contracts';
import { onBehalfOf, toUpstreamDomainError, UpstreamError, type InternalClient, type InternalResponse } from '@sched/http';
import { z } from 'zod';
import type { EventTypeDirectory, PageEventType, SlotSource } from '../domain/ports';
import { answerError } from './upstream-answer';

const eventTypeAnswer = z.object({ data: internalEventTypeSchema });
const slotsAnswer = z.object({ data: z.array(slotSchema) });

async function call<T>(fn: () => Promise<InternalResponse<T>>): Promise<InternalResponse<T>> {
  try {
    return await fn();
  } catch (err) {
    throw err instanceof UpstreamError ? toUpstreamDomainError(err) : err;
  }
}

function parse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new DomainError('upstream_unavailable', { status: 502 });
  return parsed.data;
}

function toPageEventType(e: z.infer<typeof internalEventTypeSchema>): PageEventType {
  return {
    id: e.id,
    name: e.name,
    description: e.description,
    slug: e.slug,
    durationMinutes: e.duration_minutes,
    meetingType: e.meeting_type,
    access: e.access,
    bookable: e.bookable,
  };
}

const seg = encodeURIComponent;

/** availability's internal Event Type API (contracts internal.ts) and its Slots query, for one workspace per call. */
export function createAvailabilityClient(client: InternalClient): EventTypeDirectory & SlotSource {
  async function eventType(ws: string, path: string): Promise<PageEventType | null> {
    const res = await call(() => client.request('GET', path, { onBehalf: onBehalfOf({ workspaceId: ws }) }));
    if (res.status === 404) return null;
    if (res.status !== 200) throw answerError(res);
    return toPageEventType(parse(eventTypeAnswer, res.body).data);
  }
  return {
    find: (ws, id) => eventType(ws, `/internal/v1/workspaces/${seg(ws)}/event-types/${seg(id)}`),
    findBySlug: (ws, slug) => eventType(ws, `/internal/v1/workspaces/${seg(ws)}/event-types/by-slug/${seg(slug)}`),
    async slots(ws, eventTypeId, q): Promise<Slot[]> {
      // The v1 Slots route of availability, for the page's visitor in this workspace (the credential says so).
      const res = await call(() =>
        client.request('GET', `/v1/event-types/${seg(eventTypeId)}/slots`, { searchParams: q, onBehalf: onBehalfOf({ principal: 'booking_page', workspaceId: ws }) }),
      );
      if (res.status !== 200) throw answerError(res);
      return parse(slotsAnswer, res.body).data;
    },
  };
}
