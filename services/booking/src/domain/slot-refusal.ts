import { DomainError, type SlotCheckResponse } from '@sched/contracts';

type Refusal = Extract<SlotCheckResponse, { bookable: false }>['reason'];

/**
 * Maps the slot check's "no" to the contract's errors. At create, an Event Type that does not exist in the
 * workspace is `422 invalid_reference` on `event_type_id` (decisions.md §2). At reschedule the body names
 * no Event Type, so the same answer means the new start is not bookable: `409 slot_unavailable`.
 */
export function slotRefusal(reason: Refusal, operation: 'create' | 'reschedule'): DomainError {
  switch (reason) {
    case 'not_found':
      return operation === 'create'
        ? new DomainError('invalid_reference', { details: [{ field: 'event_type_id', issue: 'not_found' }] })
        : new DomainError('slot_unavailable');
    case 'event_type_not_bookable':
      return new DomainError('event_type_not_bookable');
    case 'slot_unavailable':
      return new DomainError('slot_unavailable');
  }
}
