import { and, desc, eq, gt, inArray, sql } from 'drizzle-orm';
import type { Db, DbTx } from '@sched/db';
import { newReservationId } from '../domain/invitation';
import type { UseLedger } from '../domain/ports';
import { invitationColumns } from './invitation.queries';
import { invitations as inv, useReservations as r } from './schema';

type Conn = Db | DbTx;

/**
 * The saga's local steps, each one transaction that starts by locking the invitation row: reserve,
 * confirm and release of one invitation are thereby serialised, which is what keeps used_count plus
 * live reservations within max_uses under concurrent bookings (the CHECK constraint backs it up).
 */
export function createUseLedger(db: Conn): UseLedger {
  return {
    async findByCredentialHash(hash) {
      // The credential is the page's only key: it finds the workspace, so this lookup alone is not scoped by one.
      const [row] = await db.select(invitationColumns).from(inv).where(eq(inv.credentialHash, hash));
      return row ?? null;
    },

    reserve(hash, now, decide) {
      return db.transaction(async (tx) => {
        const [invitation] = await tx.select(invitationColumns).from(inv).where(eq(inv.credentialHash, hash)).for('update');
        if (!invitation) return null;
        const [live] = await tx
          .select({ n: sql<number>`count(*)::int` })
          .from(r)
          .where(and(eq(r.workspaceId, invitation.workspaceId), eq(r.invitationId, invitation.id), eq(r.status, 'pending'), gt(r.expiresAt, now)));
        const reservation = decide(invitation, live?.n ?? 0);
        await tx.insert(r).values({
          id: reservation.id,
          workspaceId: invitation.workspaceId,
          invitationId: invitation.id,
          status: 'pending',
          startAt: reservation.startAt,
          guestEmail: reservation.guestEmail,
          expiresAt: reservation.expiresAt,
          createdAt: now,
        });
        return { invitation, reservation };
      });
    },

    confirm(p) {
      return db.transaction(async (tx) => {
        const [invitation] = await tx
          .select({ usedCount: inv.usedCount, maxUses: inv.maxUses })
          .from(inv)
          .where(and(eq(inv.workspaceId, p.workspaceId), eq(inv.id, p.invitationId)))
          .for('update');
        if (!invitation) return 'no_invitation';
        const settle = { status: 'confirmed' as const, bookingId: p.bookingId, settledAt: p.now };

        const [counted] = await tx.select({ id: r.id }).from(r).where(and(eq(r.workspaceId, p.workspaceId), eq(r.bookingId, p.bookingId)));
        if (counted) {
          // The other path (HTTP answer or booking.created) already counted this Booking under another
          // reservation (e.g. a double submit matched by start and email): this one holds nothing more.
          if (p.reservationId && p.reservationId !== counted.id) await releasePending(tx, p.workspaceId, p.reservationId, p.now);
          return 'already_counted';
        }

        let settled = false;
        if (p.reservationId) {
          const rows = await tx
            .update(r)
            .set(settle)
            .where(and(eq(r.workspaceId, p.workspaceId), eq(r.id, p.reservationId), inArray(r.status, ['pending', 'released'])))
            .returning({ id: r.id });
          settled = rows.length > 0;
        }
        if (!settled) {
          // booking.created without the reservation id: the attempt for this start and guest, pending first.
          const [match] = await tx
            .select({ id: r.id })
            .from(r)
            .where(
              and(
                eq(r.workspaceId, p.workspaceId),
                eq(r.invitationId, p.invitationId),
                inArray(r.status, ['pending', 'released']),
                eq(r.startAt, p.startAt),
                sql`lower(${r.guestEmail}) = lower(${p.guestEmail})`,
              ),
            )
            .orderBy(sql`(${r.status} = 'pending') DESC`, desc(r.createdAt))
            .limit(1)
            .for('update');
          if (match) await tx.update(r).set(settle).where(and(eq(r.workspaceId, p.workspaceId), eq(r.id, match.id)));
          else {
            await tx.insert(r).values({
              id: newReservationId(),
              workspaceId: p.workspaceId,
              invitationId: p.invitationId,
              startAt: p.startAt,
              guestEmail: p.guestEmail,
              expiresAt: p.now,
              createdAt: p.now,
              ...settle,
            });
          }
        }

        // Only reachable after a reservation lapsed (crash + late event) and its use was taken meanwhile.
        if (invitation.usedCount >= invitation.maxUses) return 'over_limit';
        await tx
          .update(inv)
          .set({ usedCount: sql`${inv.usedCount} + 1`, updatedAt: p.now })
          .where(and(eq(inv.workspaceId, p.workspaceId), eq(inv.id, p.invitationId)));
        return 'counted';
      });
    },

    async release(ws, reservationId, now) {
      await releasePending(db, ws, reservationId, now);
    },
  };
}

async function releasePending(db: Conn, ws: string, id: string, now: Date): Promise<void> {
  await db
    .update(r)
    .set({ status: 'released', settledAt: now })
    .where(and(eq(r.workspaceId, ws), eq(r.id, id), eq(r.status, 'pending')));
}
