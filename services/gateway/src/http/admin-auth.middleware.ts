import { timingSafeEqual, createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { DomainError } from '@sched/contracts';
import { setRequestContext } from '@sched/http';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** `Authorization: Bearer <ADMIN_TOKEN>` on every /admin path, checked before routing (401 comes first). */
export function adminAuth(adminToken: string): RequestHandler {
  const expected = digest(adminToken);
  return (req, _res, next) => {
    const m = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '');
    if (!m || !timingSafeEqual(digest(m[1]!), expected)) return next(new DomainError('unauthenticated'));
    setRequestContext(req, { principal: 'admin' });
    next();
  };
}
