import { lowerCpuPriority, type PriorityControl } from '../src/cpu-nice';

/** An OS of threads with nice values; `refuse` answers setPriority with that errno (as node:os reports it). */
function fakeOs(nices: Record<number, number>, refuse: Record<number, string> = {}): PriorityControl & { nices: Record<number, number>; sets: number[] } {
  const fake = {
    nices: { ...nices },
    sets: [] as number[],
    threads: () => Object.keys(fake.nices).map(Number),
    getPriority: (id: number) => {
      const n = fake.nices[id === 0 ? 100 : id];
      if (n === undefined) throw Object.assign(new Error('no such process'), { code: 'ERR_SYSTEM_ERROR', info: { code: 'ESRCH' } });
      return n;
    },
    setPriority: (id: number, nice: number) => {
      fake.sets.push(id);
      const code = refuse[id];
      if (code) throw Object.assign(new Error(`uv_os_setpriority returned ${code}`), { code: 'ERR_SYSTEM_ERROR', info: { code } });
      fake.nices[id] = nice;
    },
  };
  return fake;
}

describe('lowerCpuPriority', () => {
  it('sets every thread below the value to it, and reports the main thread\'s value', () => {
    const os = fakeOs({ 100: 0, 101: 0, 102: 0 });
    expect(lowerCpuPriority(15, os)).toEqual({ nice: 15, changed: 3 });
    expect(os.nices).toEqual({ 100: 15, 101: 15, 102: 15 });
  });

  it('never raises a priority: threads already at that nice value or a higher one are left alone', () => {
    const os = fakeOs({ 100: 19, 101: 15, 102: 3 });
    expect(lowerCpuPriority(15, os)).toEqual({ nice: 19, changed: 1 });
    expect(os.nices).toEqual({ 100: 19, 101: 15, 102: 15 });
    expect(os.sets).toEqual([102]);
  });

  it('changes nothing at 0', () => {
    const os = fakeOs({ 100: 0, 101: 0 });
    expect(lowerCpuPriority(0, os)).toEqual({ nice: 0, changed: 0 });
    expect(os.sets).toEqual([]);
  });

  it('skips a thread that ended meanwhile', () => {
    const os = fakeOs({ 100: 0, 101: 0 });
    const threads = os.threads;
    os.threads = () => [...threads(), 999];
    expect(lowerCpuPriority(10, os)).toEqual({ nice: 10, changed: 2 });
  });

  it('reports the refusal of the OS and still sets the threads it may', () => {
    const os = fakeOs({ 100: 0, 101: 0, 102: 0 }, { 101: 'EACCES' });
    const out = lowerCpuPriority(10, os);
    expect(out).toMatchObject({ nice: 10, changed: 2 });
    expect(out.error?.message).toMatch(/EACCES/);
    expect(os.nices).toEqual({ 100: 10, 101: 0, 102: 10 });
  });
});
