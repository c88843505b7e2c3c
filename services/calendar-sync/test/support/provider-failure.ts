import { ProviderError } from '../../src/domain/calendar-provider';

/** The ProviderError a provider call failed with (the test fails if it resolved or threw anything else). */
export async function providerFailure(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}
