/** Escapes text for an HTML attribute or text node. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/**
 * The one HTML document of the hosted booking page. It holds no data: the script reads the page kind
 * from the URL and asks the page API, so one static shell serves invitation and public pages alike.
 * Semantic landmarks, real labels, native controls (keyboard usable as they are), one live region.
 */
export function bookingPageHtml(basePath: string): string {
  const base = escapeHtml(basePath);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>Book a meeting</title>
<link rel="stylesheet" href="${base}/assets/booking-page.css">
<script src="${base}/assets/booking-page.js" defer></script>
</head>
<body data-base="${base}">
<a class="skip" href="#main">Skip to content</a>
<main id="main" class="card">
  <header class="event">
    <h1 id="title">Book a meeting</h1>
    <p id="event-meta" class="meta"></p>
    <p id="event-description" class="description" hidden></p>
  </header>

  <p id="status" class="status" role="status" aria-live="polite">Loading…</p>
  <noscript><p class="notice">This booking page needs JavaScript to show the free times.</p></noscript>

  <section id="notice" class="notice" hidden aria-labelledby="notice-title" tabindex="-1">
    <h2 id="notice-title"></h2>
    <p id="notice-text"></p>
  </section>

  <form id="booking-form" hidden novalidate>
    <fieldset>
      <legend><span class="step">1</span> Pick a day</legend>
      <div class="row">
        <div class="field">
          <label for="date">Date</label>
          <input id="date" name="date" type="date" required>
        </div>
        <div class="field">
          <label for="timezone">Your time zone</label>
          <select id="timezone" name="timezone"></select>
        </div>
      </div>
      <div id="next-days-wrap" hidden>
        <p class="hint" id="next-days-label">Next days with free times:</p>
        <ul id="next-days" class="chips" aria-labelledby="next-days-label"></ul>
      </div>
    </fieldset>

    <fieldset id="slots-fieldset">
      <legend><span class="step">2</span> Pick a time</legend>
      <div id="slots" class="slots"></div>
      <p id="slots-empty" class="hint" hidden>No free times on this day. Pick another day.</p>
    </fieldset>

    <fieldset>
      <legend><span class="step">3</span> Your details</legend>
      <div class="field">
        <label for="name">Name</label>
        <input id="name" name="name" type="text" autocomplete="name" maxlength="120" required aria-describedby="name-error">
        <p id="name-error" class="error" hidden></p>
      </div>
      <div class="field">
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="email" maxlength="254" required aria-describedby="email-hint email-error">
        <p id="email-hint" class="hint" hidden>Use the email address this invitation was sent to.</p>
        <p id="email-error" class="error" hidden></p>
      </div>
    </fieldset>

    <p id="form-error" class="error" role="alert" hidden></p>
    <button id="submit" type="submit">Book this time</button>
  </form>

  <section id="confirmation" class="confirmation" hidden aria-labelledby="confirmation-title" tabindex="-1">
    <h2 id="confirmation-title">You are booked</h2>
    <p id="confirmation-when" class="when"></p>
    <dl>
      <dt>Name</dt><dd id="confirmation-name"></dd>
      <dt>Email</dt><dd id="confirmation-email"></dd>
      <dt>Reference</dt><dd id="confirmation-id"></dd>
    </dl>
    <p class="hint">A calendar invitation follows by email.</p>
  </section>
</main>
</body>
</html>
`;
}
