// The hosted booking page's script (docs/booking-page.md). esbuild bundles this module and its imports
// into one ES2017 script (../page-script.ts); it reads the page kind from its URL and asks the page API.
import { AttemptStore, newToken, type BookingAttempt } from './booking-attempt';
import { addDays, detectTimeZone, fullDateTime, fullDay, longDay, shortDay, timeIn, timeZones, todayIn } from './dates';
import { buttonEl, el, inputEl, say, selectEl } from './dom';
import { api, errorOf, firstIssue, pageTarget, type Answer, type BookingBody, type PageBooking, type PageInfo, type Slot } from './page-api';

type NoticeKind = 'revoked' | 'expired' | 'exhausted' | 'not_yet_valid' | 'not_found' | 'not_bookable' | 'failed';

const STATUS_TEXT: Record<NoticeKind, [title: string, text: string]> = {
  revoked: ['This invitation was revoked', 'The person who invited you has withdrawn this invitation. Ask them for a new link if you still want to meet.'],
  expired: ['This invitation has expired', 'The booking period of this invitation is over. Ask the person who invited you for a new link.'],
  exhausted: ['This invitation has been used', 'Every booking this invitation allows has been made. Ask the person who invited you for a new link.'],
  not_yet_valid: ['This invitation is not open yet', 'You can book with this link from '],
  not_found: ['This booking link is not valid', 'Check that you opened the whole link. An invitation link stops working when a newer one replaces it.'],
  not_bookable: ['Booking is not possible right now', 'This meeting cannot be booked at the moment. Please try again later.'],
  failed: ['Something went wrong', 'The booking page could not be loaded. Please try again in a moment.'],
};

const MEETING_KIND: Record<string, string> = { video: 'Video call', phone: 'Phone call', in_person: 'In person', custom: 'Meeting' };

const base = document.body.getAttribute('data-base') || '';
const target = pageTarget(base, location.pathname);
const attempts = new AttemptStore(location.pathname);

const state: { tz: string; from: string | null; to: string | null; byDay: Record<string, Slot[]>; date: string | null; info: PageInfo | null; sending: boolean } = {
  tz: detectTimeZone(),
  from: null,
  to: null,
  byDay: {},
  date: null,
  info: null,
  sending: false,
};

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function showNotice(kind: string, extra?: string): void {
  const text = STATUS_TEXT[kind as NoticeKind] || STATUS_TEXT.failed;
  el('booking-form').hidden = true;
  el('confirmation').hidden = true;
  el('notice-title').textContent = text[0];
  el('notice-text').textContent = text[1] + (extra || '');
  el('notice').hidden = false;
  el('notice').setAttribute('data-state', kind);
  document.title = text[0];
  say('');
  el('notice').focus();
}

function fillTimeZones(): void {
  const select = selectEl('timezone');
  timeZones(state.tz).forEach((z) => {
    const option = document.createElement('option');
    option.value = z;
    option.textContent = z.replace(/_/g, ' ');
    if (z === state.tz) option.selected = true;
    select.appendChild(option);
  });
}

function renderEvent(info: PageInfo): void {
  const e = info.event_type;
  el('title').textContent = e.name;
  document.title = 'Book: ' + e.name;
  const kind = MEETING_KIND[e.meeting_type] || 'Meeting';
  el('event-meta').textContent = e.duration_minutes + ' minutes · ' + kind;
  if (e.description) {
    el('event-description').textContent = e.description;
    el('event-description').hidden = false;
  }
  el('email-hint').hidden = !info.email_restricted;
}

function slotsQuery(from: string, to: string): string {
  return '/slots?from=' + from + '&to=' + to + '&timezone=' + encodeURIComponent(state.tz);
}

function loadWindow(preferredDate: string | null): Promise<void> {
  const from = todayIn(state.tz);
  const to = addDays(from, 30);
  say('Loading free times…');
  return api<{ slots: Slot[] }>(target, 'GET', slotsQuery(from, to)).then((answer) => {
    if (answer.status !== 200 || !answer.body.data) return handleLoadError(answer);
    state.from = from;
    state.to = to;
    state.byDay = {};
    answer.body.data.slots.forEach((slot) => {
      const day = slot.local_start_at.slice(0, 10);
      (state.byDay[day] = state.byDay[day] || []).push(slot);
    });
    const days = Object.keys(state.byDay).sort();
    renderNextDays(days.slice(0, 7));
    inputEl('date').min = from;
    const date = preferredDate && preferredDate >= from ? preferredDate : days[0] || from;
    inputEl('date').value = date;
    return showDay(date);
  });
}

function handleLoadError(answer: Answer<unknown>): void {
  const err = errorOf(answer);
  if (answer.status === 404) return showNotice('not_found');
  if (err.code === 'invitation_not_active') return showNotice(firstIssue(err) || 'expired');
  if (err.code === 'event_type_not_bookable') return showNotice('not_bookable');
  if (err.code === 'calendar_unavailable') return say('The host calendar cannot be checked right now. Please try again in a minute.');
  say(err.message || 'The free times could not be loaded.');
}

function renderNextDays(days: string[]): void {
  const list = el('next-days');
  list.textContent = '';
  days.forEach((day) => {
    const li = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = shortDay(day);
    button.setAttribute('data-date', day);
    button.setAttribute('aria-pressed', 'false');
    button.addEventListener('click', () => {
      inputEl('date').value = day;
      void showDay(day);
    });
    li.appendChild(button);
    list.appendChild(li);
  });
  el('next-days-wrap').hidden = days.length === 0;
}

function showDay(date: string): Promise<void> {
  state.date = date;
  el('next-days')
    .querySelectorAll('button')
    .forEach((b) => b.setAttribute('aria-pressed', String(b.getAttribute('data-date') === date)));
  if (!date) return Promise.resolve();
  if (state.from && state.to && date >= state.from && date <= state.to) {
    renderSlots(date, state.byDay[date] || []);
    return Promise.resolve();
  }
  // Outside the loaded window: ask for that one day.
  say('Loading free times…');
  return api<{ slots: Slot[] }>(target, 'GET', slotsQuery(date, date)).then((answer) => {
    if (answer.status !== 200 || !answer.body.data) return handleLoadError(answer);
    renderSlots(date, answer.body.data.slots);
  });
}

function renderSlots(date: string, slots: Slot[]): void {
  const box = el('slots');
  box.textContent = '';
  slots.forEach((slot, i) => {
    const wrap = document.createElement('div');
    wrap.className = 'slot';
    const input = document.createElement('input');
    input.type = 'radio';
    input.name = 'slot';
    input.id = 'slot-' + i;
    input.value = slot.start_at;
    const label = document.createElement('label');
    label.htmlFor = input.id;
    label.textContent = timeIn(slot.start_at, state.tz) + ' – ' + timeIn(slot.end_at, state.tz);
    wrap.appendChild(input);
    wrap.appendChild(label);
    box.appendChild(wrap);
  });
  el('slots-empty').hidden = slots.length > 0;
  say(slots.length === 0 ? 'No free times on ' + longDay(date) + '.' : slots.length + (slots.length === 1 ? ' free time' : ' free times') + ' on ' + longDay(date) + '.');
}

function fieldError(field: 'name' | 'email', message: string): void {
  const input = el(field);
  const error = el(field + '-error');
  if (message) {
    input.setAttribute('aria-invalid', 'true');
    error.textContent = message;
    error.hidden = false;
  } else {
    input.removeAttribute('aria-invalid');
    error.textContent = '';
    error.hidden = true;
  }
}

function formError(message: string): void {
  el('form-error').textContent = message || '';
  el('form-error').hidden = !message;
}

function selectedStart(): string | null {
  const checked = document.querySelector<HTMLInputElement>('input[name=slot]:checked');
  return checked ? checked.value : null;
}

function submit(event: SubmitEvent): void {
  event.preventDefault();
  formError('');
  const name = inputEl('name').value.trim();
  const email = inputEl('email').value.trim();
  const start = selectedStart();
  fieldError('name', name ? '' : 'Enter your name.');
  fieldError('email', /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(email) ? '' : 'Enter a valid email address.');
  if (!start) formError('Pick a time first.');
  if (!name) return el('name').focus();
  if (el('email').getAttribute('aria-invalid') === 'true') return el('email').focus();
  if (!start) return el('date').focus();

  if (state.sending) return; // one confirm at a time: the button is disabled meanwhile
  const body: BookingBody = { start_at: start, guest: { name, email, timezone: state.tz } };
  const json = JSON.stringify(body);
  let attempt = attempts.load();
  if (!attempt || attempt.body !== json) attempt = { key: newToken(), body: json };
  void send(attempt, 0);
}

// A 409 that says "try again in a moment" (the same key still running, or every use held by a
// booking in flight, maybe this very one before a reload) is retried with the same key a few times.
function mayRetry(answer: Answer<unknown>, tries: number): boolean {
  const err = errorOf(answer);
  return answer.status === 409 && tries < 5 && (err.code === 'idempotency_request_in_progress' || firstIssue(err) === 'uses_in_progress');
}

function send(attempt: BookingAttempt, tries: number): Promise<void> {
  const button = buttonEl('submit');
  state.sending = true;
  button.disabled = true;
  say('Booking…');
  attempts.save({ key: attempt.key, body: attempt.body, sending: true });
  return api<PageBooking>(target, 'POST', '/bookings', JSON.parse(attempt.body), { 'Idempotency-Key': attempt.key })
    .then((answer): void | Promise<void> => {
      if (mayRetry(answer, tries)) return wait(1000 * (Number(answer.retryAfter) || 1)).then(() => send(attempt, tries + 1));
      state.sending = false;
      button.disabled = false;
      // A 4xx is this key's final answer: the next try, even of the same time, gets a new token. After
      // a success, a 5xx (the booking may exist) or a 429 the token stays for the same booking.
      const settled = answer.status >= 400 && answer.status < 500 && answer.status !== 429;
      attempts.save(settled ? null : { key: attempt.key, body: attempt.body, sending: false });
      if (answer.status === 201 && answer.body.data) return showConfirmation(answer.body.data);
      return handleBookingError(answer);
    })
    .catch(() => {
      state.sending = false;
      button.disabled = false;
      attempts.save({ key: attempt.key, body: attempt.body, sending: false });
      say('');
      formError('The booking could not be sent. Check your connection and try again.');
    });
}

// A reload while a confirm was in flight: send it again with its key, so the visitor sees the outcome
// of the booking they confirmed (the first answer replayed) instead of a form that may book twice.
function resumeAttempt(): Promise<void> | undefined {
  const attempt = attempts.load();
  if (!attempt || !attempt.sending) return undefined;
  const body = JSON.parse(attempt.body) as BookingBody;
  inputEl('name').value = body.guest.name;
  inputEl('email').value = body.guest.email;
  return send(attempt, 0);
}

function handleBookingError(answer: Answer<unknown>): void | Promise<void> {
  const err = errorOf(answer);
  const issue = firstIssue(err);
  say('');
  if (answer.status === 429) return formError('Too many booking attempts from your network. Try again in ' + (answer.retryAfter || 'a few') + ' seconds.');
  if (err.code === 'slot_unavailable') {
    formError('That time was just taken. Pick another time.');
    return loadWindow(state.date);
  }
  if (err.code === 'invitation_not_active') {
    if (issue === 'uses_in_progress') return formError('This invitation is being used right now. Try again in a moment.');
    return showNotice(issue || 'expired');
  }
  if (err.code === 'not_found') return showNotice('not_found');
  if (err.code === 'event_type_not_bookable') return showNotice('not_bookable');
  if (err.code === 'calendar_unavailable') return formError('The host calendar cannot be checked right now. Please try again in a minute.');
  if (err.code === 'invalid_request') {
    let handled = false;
    (err.details || []).forEach((d) => {
      if (d.field === 'guest.email' && d.issue === 'not_invited') {
        fieldError('email', 'This invitation was sent to another email address. Use the address the invitation was sent to.');
        handled = true;
      } else if (d.field === 'guest.email') {
        fieldError('email', 'Enter a valid email address.');
        handled = true;
      } else if (d.field === 'guest.name') {
        fieldError('name', 'Enter a name of at most 120 characters.');
        handled = true;
      }
    });
    if (handled) return el('email').getAttribute('aria-invalid') === 'true' ? el('email').focus() : el('name').focus();
  }
  return formError(err.message || 'The booking failed. Please try again.');
}

function showConfirmation(booking: PageBooking): void {
  const tz = state.tz;
  el('confirmation-when').textContent = fullDay(booking.start_at, tz) + ', ' + timeIn(booking.start_at, tz) + ' – ' + timeIn(booking.end_at, tz) + ' (' + tz.replace(/_/g, ' ') + ')';
  el('confirmation-name').textContent = booking.guest.name;
  el('confirmation-email').textContent = booking.guest.email;
  el('confirmation-id').textContent = booking.id;
  el('booking-form').hidden = true;
  el('confirmation').hidden = false;
  document.title = 'Booked: ' + el('title').textContent;
  say('Your booking is confirmed.');
  el('confirmation').focus();
}

function start(): void {
  if (!target.apiRoot) return showNotice('not_found');
  fillTimeZones();
  api<PageInfo>(target, 'GET', '')
    .then((answer): void | Promise<void> => {
      if (answer.status === 404) return showNotice('not_found');
      if (answer.status !== 200 || !answer.body.data) return showNotice('failed');
      const info = answer.body.data;
      state.info = info;
      renderEvent(info);
      if (info.status !== 'active') {
        const opens = info.status === 'not_yet_valid' && info.not_before ? fullDateTime(info.not_before, state.tz) + '.' : '';
        return showNotice(info.status, opens);
      }
      if (!info.event_type.bookable) return showNotice('not_bookable');
      el('booking-form').hidden = false;
      return loadWindow(null).then(resumeAttempt);
    })
    .catch(() => showNotice('failed'));

  el('booking-form').addEventListener('submit', submit);
  inputEl('date').addEventListener('change', () => {
    if (inputEl('date').value) void showDay(inputEl('date').value);
  });
  selectEl('timezone').addEventListener('change', () => {
    state.tz = selectEl('timezone').value;
    void loadWindow(state.date);
  });
}

start();
