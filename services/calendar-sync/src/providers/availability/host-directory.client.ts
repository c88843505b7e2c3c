import { DomainError, internalHostSchema } from '@sched/contracts';
import { onBehalfOf, toUpstreamDomainError, UpstreamError, type InternalClient } from '@sched/http';
import type { HostDirectory } from '../../domain/ports';

// Extra fields a newer availability may add are ignored rather than treated as a broken answer.
const hostAnswer = internalHostSchema.strip();

/** availability's internal host API: GET /internal/v1/workspaces/{ws}/hosts/{host} (404: no such host there). */
export function createHostDirectory(client: InternalClient): HostDirectory {
  return {
    async getHost(workspaceId, hostId) {
      let res;
      try {
        res = await client.request<{ data?: unknown }>('GET', `/internal/v1/workspaces/${encodeURIComponent(workspaceId)}/hosts/${encodeURIComponent(hostId)}`, {
          onBehalf: onBehalfOf({ workspaceId }),
        });
      } catch (err) {
        throw err instanceof UpstreamError ? toUpstreamDomainError(err) : err;
      }
      if (res.status === 404) return null;
      const parsed = res.status === 200 ? hostAnswer.safeParse(res.body?.data) : undefined;
      if (!parsed?.success) throw new DomainError('upstream_unavailable', { status: 502 });
      return parsed.data;
    },
  };
}
