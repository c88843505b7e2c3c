import { MAX_NOTIFY_PAYLOAD_BYTES, outboxNotifyPayload, parseOutboxNotifyPayload } from '../src/outbox-table';

test('a NOTIFY payload names the ids of its rows and reads back to them', () => {
  const ids = ['evt_1', "it's \"quoted\", with commas", '0f8c3e1a-7c1d-4c55-9f0a-1f2e3d4c5b6a'];
  expect(parseOutboxNotifyPayload(outboxNotifyPayload(ids))).toEqual(ids);
  // What Postgres' json_agg(id)::text writes (a space after each comma) reads the same.
  expect(parseOutboxNotifyPayload('["a", "b"]')).toEqual(['a', 'b']);
});

test('an empty, foreign or unreadable payload means "look for unpublished rows"', () => {
  for (const payload of ['', '[]', '{"id":"a"}', '[1,2]', '[""]', 'evt_1', '["a"', 'null']) expect(parseOutboxNotifyPayload(payload)).toBeUndefined();
});

test('ids that would not fit a NOTIFY give the empty payload (the relay then scans)', () => {
  const ids = Array.from({ length: 400 }, (_, i) => `${'x'.repeat(30)}-${i}`);
  expect(Buffer.byteLength(JSON.stringify(ids))).toBeGreaterThanOrEqual(MAX_NOTIFY_PAYLOAD_BYTES);
  expect(outboxNotifyPayload(ids)).toBe('');
  expect(outboxNotifyPayload(ids.slice(0, 10))).not.toBe('');
});
