import type { BrowserContext } from 'playwright-core';

/**
 * A guest on the hosted booking page (Chromium): opens the invitation link, waits for the Event Type's
 * heading and its Slots, picks the first one, fills in name and email, books, and returns the Booking
 * id the confirmation shows.
 */
export async function bookFirstSlotOnPage(context: BrowserContext, invitationUrl: string, guest: { heading: string; name: string; email: string }): Promise<string> {
  const page = await context.newPage();
  try {
    await page.goto(invitationUrl);
    await page.getByRole('heading', { level: 1, name: guest.heading }).waitFor();
    await page.locator('#slots input[name=slot]').first().waitFor({ state: 'attached' });
    await page.locator('#slots label').first().click();
    await page.getByLabel('Name').fill(guest.name);
    await page.getByLabel('Email').fill(guest.email);
    await page.getByRole('button', { name: 'Book this time' }).click();
    await page.locator('#confirmation').waitFor({ state: 'visible' });
    return (await page.locator('#confirmation-id').textContent())!.trim();
  } finally {
    await page.close();
  }
}
