import { emailSchema, isEmail } from '../src';
import { details, ok } from './helpers';

const ofLength = (n: number) => `${'a'.repeat(n - '@example.com'.length)}@example.com`;

describe('email addresses', () => {
  it('accepts 254 characters and refuses 255 with too_long', () => {
    ok(emailSchema, ofLength(254));
    expect(details(emailSchema, ofLength(255))).toEqual([{ field: '', issue: 'too_long' }]);
  });

  it.each(['ada@example.com', 'ada.lovelace+tag@mail.example.co.uk', 'o\'brien@example.ie', 'x@a.b'])('accepts %s', (e) => ok(emailSchema, e));

  it.each([
    'ada',
    'ada@',
    '@example.com',
    'ada@example',
    'ada@@example.com',
    'ada@exa@mple.com',
    'ada lovelace@example.com',
    'ada@example .com',
    'ada@example.com ',
    'ada@.example.com',
    'ada@example.com.',
    'ada@example..com',
    'ada\n@example.com',
    '',
  ])('refuses %j with invalid_format', (e) => {
    expect(details(emailSchema, e)).toEqual([{ field: '', issue: 'invalid_format' }]);
    expect(isEmail(e)).toBe(false);
  });
});
