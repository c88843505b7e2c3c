import { getPriority } from 'node:os';
import { startRadicale } from '../src';

describe('startRadicale', () => {
  it('runs Radicale at the nice value asked for, also after a restart', async () => {
    const radicale = await startRadicale({ nice: 7 });
    try {
      // Only ever lowered: a test process already nicer than 7 passes its own value on.
      const expected = Math.max(7, getPriority());
      expect(getPriority(radicale.pid()!)).toBe(expected);
      expect(await radicale.makeCalendar('alice', 'work')).toBe(radicale.calendarUrl('alice', 'work'));
      await radicale.stop();
      expect(radicale.pid()).toBeUndefined();
      await radicale.start();
      expect(getPriority(radicale.pid()!)).toBe(expected);
    } finally {
      await radicale.close();
    }
  }, 60000);

  it('refuses a nice value outside 0..19', async () => {
    await expect(startRadicale({ nice: 20 })).rejects.toThrow('startRadicale: nice must be an integer from 0 to 19, got 20');
  });
});
