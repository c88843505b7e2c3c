import type { Connection, Snapshot } from '../../src/domain/ports';
import { StoreCache } from '../../src/store/store-cache';

const conn = (id: string, hostId = `hst_${id}`): Connection => ({
  id,
  workspaceId: 'wsp_1',
  hostId,
  provider: 'caldav',
  url: 'http://cal.example',
  username: 'u',
  passwordSealed: 'sealed',
  calendarUrl: 'http://cal.example/u/c/',
  hostTimezone: 'UTC',
  conferencingUrlTemplate: null,
  status: 'connected',
  errorCode: null,
  createdAt: new Date(0),
  updatedAt: new Date(0),
});

const snap = (connectionId: string): Snapshot => ({
  connectionId,
  range: { start: new Date(0), end: new Date(1000) },
  fetchedAt: new Date(500),
  changeMarker: 'ctag:1',
  items: [],
});

describe('StoreCache', () => {
  it('serves nothing until enabled (LISTEN in place), and drops everything when disabled', () => {
    const cache = new StoreCache();
    cache.putConnection(conn('cal_a'), cache.token());
    expect(cache.getConnection('wsp_1', 'hst_cal_a')).toBeUndefined();

    cache.enable();
    cache.putConnection(conn('cal_a'), cache.token());
    cache.putSnapshot(conn('cal_a'), snap('cal_a'), cache.token());
    expect(cache.getConnection('wsp_1', 'hst_cal_a')?.id).toBe('cal_a');
    expect(cache.getSnapshot(conn('cal_a'))?.changeMarker).toBe('ctag:1');

    cache.disable();
    expect(cache.getConnection('wsp_1', 'hst_cal_a')).toBeUndefined();
    expect(cache.getSnapshot(conn('cal_a'))).toBeUndefined();
    cache.enable();
    expect(cache.getConnection('wsp_1', 'hst_cal_a')).toBeUndefined(); // starts empty again
  });

  it('drops a connection and its snapshot by connection id, and never stores a read that overlapped an invalidation of that connection', () => {
    const cache = new StoreCache();
    cache.enable();
    cache.putConnection(conn('cal_a'), cache.token());
    cache.putSnapshot(conn('cal_a'), snap('cal_a'), cache.token());
    cache.putConnection(conn('cal_b'), cache.token());
    cache.invalidate('cal_a');
    expect(cache.getConnection('wsp_1', 'hst_cal_a')).toBeUndefined();
    expect(cache.getSnapshot(conn('cal_a'))).toBeUndefined();
    expect(cache.getConnection('wsp_1', 'hst_cal_b')?.id).toBe('cal_b');

    const token = cache.token(); // a read starts…
    cache.invalidate('cal_a'); // …a change to that connection is announced meanwhile…
    cache.putConnection(conn('cal_a'), token); // …so what it read may be older: not kept
    cache.putSnapshot(conn('cal_a'), snap('cal_a'), token);
    expect(cache.getConnection('wsp_1', 'hst_cal_a')).toBeUndefined();
    expect(cache.getSnapshot(conn('cal_a'))).toBeUndefined();
    cache.putConnection(conn('cal_d'), token); // a change to another connection says nothing of this read
    expect(cache.getConnection('wsp_1', 'hst_cal_d')?.id).toBe('cal_d');

    cache.invalidateAll();
    expect(cache.getConnection('wsp_1', 'hst_cal_b')).toBeUndefined();
  });

  it('does not hand out a snapshot to a connection of another workspace', () => {
    const cache = new StoreCache();
    cache.enable();
    cache.putSnapshot(conn('cal_a'), snap('cal_a'), cache.token());
    expect(cache.getSnapshot({ id: 'cal_a', workspaceId: 'wsp_2' })).toBeUndefined();
  });

  it('stays within its bounds', () => {
    const cache = new StoreCache({ maxEntries: 2, maxOwnIds: 3 });
    cache.enable();
    for (const id of ['cal_a', 'cal_b', 'cal_c']) cache.putConnection(conn(id), cache.token());
    expect(cache.getConnection('wsp_1', 'hst_cal_a')).toBeUndefined();
    expect(cache.getConnection('wsp_1', 'hst_cal_c')?.id).toBe('cal_c');

    cache.rememberOwnIds('wsp_1', 'hst_1', ['bkg_1', 'bkg_2']);
    expect(cache.knownOwnIds('wsp_1', 'hst_1', ['bkg_1', 'bkg_2', 'bkg_3'])).toEqual(['bkg_1', 'bkg_2']);
    expect(cache.knownOwnIds('wsp_1', 'hst_2', ['bkg_1'])).toEqual([]); // per host
    cache.rememberOwnIds('wsp_1', 'hst_1', ['bkg_3', 'bkg_4']); // past the bound: memory starts over
    expect(cache.knownOwnIds('wsp_1', 'hst_1', ['bkg_1', 'bkg_4'])).toEqual(['bkg_4']);
  });
});
