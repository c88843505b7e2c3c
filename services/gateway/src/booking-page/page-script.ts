/**
 * The booking page's script: plain ES2017 for any current browser, no framework, no build step. It is
 * kept here as a string so the gateway bundle carries it (the image ships only dist/). No template
 * literals inside, so the string needs no escaping.
 */
export const BOOKING_PAGE_JS = String.raw`(function () {
  'use strict';
  var base = document.body.getAttribute('data-base') || '';
  function $(id) { return document.getElementById(id); }
  var parts = location.pathname.slice(base.length).split('/').filter(Boolean);
  var credential = null;
  var apiRoot = null;
  if (parts.length === 2 && parts[0] === 'i') {
    credential = parts[1];
    apiRoot = base + '/api/invitation';
  } else if (parts.length === 2) {
    apiRoot = base + '/api/public/' + parts[0] + '/' + parts[1];
  }

  var state = { tz: detectTimeZone(), from: null, to: null, byDay: {}, date: null, info: null, sending: false };
  // The confirm POST's Idempotency-Key (docs/booking-page.md): a per-form token, random, kept in this
  // tab's sessionStorage with the body it was sent with. The same booking sent again (a double submit,
  // a retry, the resend after a reload) carries the same key, so the service answers the first result
  // instead of booking twice; another booking (another time, name or email) gets a new token.
  var ATTEMPT_ITEM = 'sched.booking-page.attempt:' + location.pathname;
  var attemptInMemory = null;
  var STATUS_TEXT = {
    revoked: ['This invitation was revoked', 'The person who invited you has withdrawn this invitation. Ask them for a new link if you still want to meet.'],
    expired: ['This invitation has expired', 'The booking period of this invitation is over. Ask the person who invited you for a new link.'],
    exhausted: ['This invitation has been used', 'Every booking this invitation allows has been made. Ask the person who invited you for a new link.'],
    not_yet_valid: ['This invitation is not open yet', 'You can book with this link from '],
    not_found: ['This booking link is not valid', 'Check that you opened the whole link. An invitation link stops working when a newer one replaces it.'],
    not_bookable: ['Booking is not possible right now', 'This meeting cannot be booked at the moment. Please try again later.'],
    failed: ['Something went wrong', 'The booking page could not be loaded. Please try again in a moment.']
  };

  function detectTimeZone() {
    try { return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'; } catch (e) { return 'UTC'; }
  }

  function say(text) { $('status').textContent = text; }

  function api(method, path, body, extraHeaders) {
    var headers = { Accept: 'application/json' };
    if (credential) headers['X-Invitation-Credential'] = credential;
    Object.keys(extraHeaders || {}).forEach(function (name) { headers[name] = extraHeaders[name]; });
    var init = { method: method, headers: headers, credentials: 'same-origin', cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return fetch(apiRoot + path, init).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (json) {
        return { status: res.status, body: json, retryAfter: res.headers.get('Retry-After') };
      });
    });
  }

  // crypto.getRandomValues works on plain http too (randomUUID needs a secure context).
  function newToken() {
    var bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return 'page_' + Array.prototype.map.call(bytes, function (b) { return (b < 16 ? '0' : '') + b.toString(16); }).join('');
  }

  // {key, body, sending}: sending is true from the POST until its answer, so a reload resends it.
  function loadAttempt() {
    try {
      var stored = sessionStorage.getItem(ATTEMPT_ITEM);
      return stored ? JSON.parse(stored) : null;
    } catch (e) {
      return attemptInMemory; // storage disabled: the token still covers this page's own retries
    }
  }
  function saveAttempt(attempt) {
    attemptInMemory = attempt;
    try {
      if (attempt) sessionStorage.setItem(ATTEMPT_ITEM, JSON.stringify(attempt));
      else sessionStorage.removeItem(ATTEMPT_ITEM);
    } catch (e) { /* memory only */ }
  }

  function wait(ms) { return new Promise(function (resolve) { setTimeout(resolve, ms); }); }

  function errorOf(answer) { return (answer.body && answer.body.error) || { code: 'internal_error', details: [] }; }

  function showNotice(kind, extra) {
    var text = STATUS_TEXT[kind] || STATUS_TEXT.failed;
    $('booking-form').hidden = true;
    $('confirmation').hidden = true;
    $('notice-title').textContent = text[0];
    $('notice-text').textContent = text[1] + (extra || '');
    $('notice').hidden = false;
    $('notice').setAttribute('data-state', kind);
    document.title = text[0];
    say('');
    $('notice').focus();
  }

  // Dates as YYYY-MM-DD strings; arithmetic on them in UTC so no local DST shift can move a day.
  function todayIn(tz) {
    return new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
  }
  function addDays(date, n) {
    var d = new Date(date + 'T00:00:00Z');
    d.setUTCDate(d.getUTCDate() + n);
    return d.toISOString().slice(0, 10);
  }
  function longDay(date) {
    return new Intl.DateTimeFormat(undefined, { timeZone: 'UTC', weekday: 'long', day: 'numeric', month: 'long' }).format(new Date(date + 'T12:00:00Z'));
  }
  function shortDay(date) {
    return new Intl.DateTimeFormat(undefined, { timeZone: 'UTC', weekday: 'short', day: 'numeric', month: 'short' }).format(new Date(date + 'T12:00:00Z'));
  }
  function timeIn(iso, tz) {
    return new Intl.DateTimeFormat(undefined, { timeZone: tz, hour: '2-digit', minute: '2-digit' }).format(new Date(iso));
  }

  function fillTimeZones() {
    var select = $('timezone');
    var zones = [];
    try { zones = Intl.supportedValuesOf('timeZone'); } catch (e) { zones = []; }
    if (zones.indexOf('UTC') < 0) zones = ['UTC'].concat(zones);
    if (zones.indexOf(state.tz) < 0) zones = [state.tz].concat(zones);
    zones.forEach(function (z) {
      var option = document.createElement('option');
      option.value = z;
      option.textContent = z.replace(/_/g, ' ');
      if (z === state.tz) option.selected = true;
      select.appendChild(option);
    });
  }

  function renderEvent(info) {
    var e = info.event_type;
    $('title').textContent = e.name;
    document.title = 'Book: ' + e.name;
    var kind = { video: 'Video call', phone: 'Phone call', in_person: 'In person', custom: 'Meeting' }[e.meeting_type] || 'Meeting';
    $('event-meta').textContent = e.duration_minutes + ' minutes · ' + kind;
    if (e.description) {
      $('event-description').textContent = e.description;
      $('event-description').hidden = false;
    }
    $('email-hint').hidden = !info.email_restricted;
  }

  function loadWindow(preferredDate) {
    var from = todayIn(state.tz);
    var to = addDays(from, 30);
    say('Loading free times…');
    var query = '?from=' + from + '&to=' + to + '&timezone=' + encodeURIComponent(state.tz);
    return api('GET', '/slots' + query).then(function (answer) {
      if (answer.status !== 200) return handleLoadError(answer);
      state.from = from;
      state.to = to;
      state.byDay = {};
      answer.body.data.slots.forEach(function (slot) {
        var day = slot.local_start_at.slice(0, 10);
        (state.byDay[day] = state.byDay[day] || []).push(slot);
      });
      var days = Object.keys(state.byDay).sort();
      renderNextDays(days.slice(0, 7));
      $('date').min = from;
      var date = preferredDate && preferredDate >= from ? preferredDate : days[0] || from;
      $('date').value = date;
      return showDay(date);
    });
  }

  function handleLoadError(answer) {
    var err = errorOf(answer);
    if (answer.status === 404) return showNotice('not_found');
    if (err.code === 'invitation_not_active') return showNotice((err.details[0] && err.details[0].issue) || 'expired');
    if (err.code === 'event_type_not_bookable') return showNotice('not_bookable');
    if (err.code === 'calendar_unavailable') {
      say('The host calendar cannot be checked right now. Please try again in a minute.');
      return undefined;
    }
    say(err.message || 'The free times could not be loaded.');
    return undefined;
  }

  function renderNextDays(days) {
    var list = $('next-days');
    list.textContent = '';
    days.forEach(function (day) {
      var li = document.createElement('li');
      var button = document.createElement('button');
      button.type = 'button';
      button.textContent = shortDay(day);
      button.setAttribute('data-date', day);
      button.setAttribute('aria-pressed', 'false');
      button.addEventListener('click', function () {
        $('date').value = day;
        showDay(day);
      });
      li.appendChild(button);
      list.appendChild(li);
    });
    $('next-days-wrap').hidden = days.length === 0;
  }

  function showDay(date) {
    state.date = date;
    Array.prototype.forEach.call($('next-days').querySelectorAll('button'), function (b) {
      b.setAttribute('aria-pressed', String(b.getAttribute('data-date') === date));
    });
    if (!date) return Promise.resolve();
    if (date >= state.from && date <= state.to) {
      renderSlots(date, state.byDay[date] || []);
      return Promise.resolve();
    }
    // Outside the loaded window: ask for that one day.
    var query = '?from=' + date + '&to=' + date + '&timezone=' + encodeURIComponent(state.tz);
    say('Loading free times…');
    return api('GET', '/slots' + query).then(function (answer) {
      if (answer.status !== 200) return handleLoadError(answer);
      renderSlots(date, answer.body.data.slots);
      return undefined;
    });
  }

  function renderSlots(date, slots) {
    var box = $('slots');
    box.textContent = '';
    slots.forEach(function (slot, i) {
      var wrap = document.createElement('div');
      wrap.className = 'slot';
      var input = document.createElement('input');
      input.type = 'radio';
      input.name = 'slot';
      input.id = 'slot-' + i;
      input.value = slot.start_at;
      var label = document.createElement('label');
      label.htmlFor = input.id;
      label.textContent = timeIn(slot.start_at, state.tz) + ' – ' + timeIn(slot.end_at, state.tz);
      wrap.appendChild(input);
      wrap.appendChild(label);
      box.appendChild(wrap);
    });
    $('slots-empty').hidden = slots.length > 0;
    say(slots.length === 0 ? 'No free times on ' + longDay(date) + '.' : slots.length + (slots.length === 1 ? ' free time' : ' free times') + ' on ' + longDay(date) + '.');
  }

  function fieldError(field, message) {
    var input = $(field);
    var error = $(field + '-error');
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

  function formError(message) {
    $('form-error').textContent = message || '';
    $('form-error').hidden = !message;
  }

  function selectedStart() {
    var checked = document.querySelector('input[name=slot]:checked');
    return checked ? checked.value : null;
  }

  function submit(event) {
    event.preventDefault();
    formError('');
    var name = $('name').value.trim();
    var email = $('email').value.trim();
    var start = selectedStart();
    fieldError('name', name ? '' : 'Enter your name.');
    fieldError('email', /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(email) ? '' : 'Enter a valid email address.');
    if (!start) formError('Pick a time first.');
    if (!name) return $('name').focus();
    if ($('email').getAttribute('aria-invalid') === 'true') return $('email').focus();
    if (!start) return $('date').focus();

    if (state.sending) return undefined; // one confirm at a time: the button is disabled meanwhile
    var body = JSON.stringify({ start_at: start, guest: { name: name, email: email, timezone: state.tz } });
    var attempt = loadAttempt();
    if (!attempt || attempt.body !== body) attempt = { key: newToken(), body: body };
    return send(attempt, 0);
  }

  // A 409 that says "try again in a moment" (the same key still running, or every use held by a
  // booking in flight, maybe this very one before a reload) is retried with the same key a few times.
  function mayRetry(answer, tries) {
    var err = errorOf(answer);
    var issue = err.details && err.details[0] ? err.details[0].issue : null;
    return answer.status === 409 && tries < 5 && (err.code === 'idempotency_request_in_progress' || issue === 'uses_in_progress');
  }

  function send(attempt, tries) {
    var button = $('submit');
    state.sending = true;
    button.disabled = true;
    say('Booking…');
    saveAttempt({ key: attempt.key, body: attempt.body, sending: true });
    return api('POST', '/bookings', JSON.parse(attempt.body), { 'Idempotency-Key': attempt.key })
      .then(function (answer) {
        if (mayRetry(answer, tries)) return wait(1000 * (Number(answer.retryAfter) || 1)).then(function () { return send(attempt, tries + 1); });
        state.sending = false;
        button.disabled = false;
        // A 4xx is this key's final answer: the next try, even of the same time, gets a new token. After
        // a success, a 5xx (the booking may exist) or a 429 the token stays for the same booking.
        var settled = answer.status >= 400 && answer.status < 500 && answer.status !== 429;
        saveAttempt(settled ? null : { key: attempt.key, body: attempt.body, sending: false });
        if (answer.status === 201) return showConfirmation(answer.body.data);
        return handleBookingError(answer);
      })
      .catch(function () {
        state.sending = false;
        button.disabled = false;
        saveAttempt({ key: attempt.key, body: attempt.body, sending: false });
        say('');
        formError('The booking could not be sent. Check your connection and try again.');
      });
  }

  // A reload while a confirm was in flight: send it again with its key, so the visitor sees the outcome
  // of the booking they confirmed (the first answer replayed) instead of a form that may book twice.
  function resumeAttempt() {
    var attempt = loadAttempt();
    if (!attempt || !attempt.sending) return undefined;
    var body = JSON.parse(attempt.body);
    $('name').value = body.guest.name;
    $('email').value = body.guest.email;
    return send(attempt, 0);
  }

  function handleBookingError(answer) {
    var err = errorOf(answer);
    var issue = err.details && err.details[0] ? err.details[0].issue : null;
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
      var handled = false;
      (err.details || []).forEach(function (d) {
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
      if (handled) return $('email').getAttribute('aria-invalid') === 'true' ? $('email').focus() : $('name').focus();
    }
    return formError(err.message || 'The booking failed. Please try again.');
  }

  function showConfirmation(booking) {
    var tz = state.tz;
    var day = new Intl.DateTimeFormat(undefined, { timeZone: tz, weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' }).format(new Date(booking.start_at));
    $('confirmation-when').textContent = day + ', ' + timeIn(booking.start_at, tz) + ' – ' + timeIn(booking.end_at, tz) + ' (' + tz.replace(/_/g, ' ') + ')';
    $('confirmation-name').textContent = booking.guest.name;
    $('confirmation-email').textContent = booking.guest.email;
    $('confirmation-id').textContent = booking.id;
    $('booking-form').hidden = true;
    $('confirmation').hidden = false;
    document.title = 'Booked: ' + $('title').textContent;
    say('Your booking is confirmed.');
    $('confirmation').focus();
  }

  function start() {
    if (!apiRoot) return showNotice('not_found');
    fillTimeZones();
    api('GET', '').then(function (answer) {
      if (answer.status === 404) return showNotice('not_found');
      if (answer.status !== 200) return showNotice('failed');
      var info = answer.body.data;
      state.info = info;
      renderEvent(info);
      if (info.status !== 'active') {
        var opens = info.status === 'not_yet_valid' && info.not_before
          ? new Intl.DateTimeFormat(undefined, { timeZone: state.tz, dateStyle: 'full', timeStyle: 'short' }).format(new Date(info.not_before)) + '.'
          : '';
        return showNotice(info.status, opens);
      }
      if (!info.event_type.bookable) return showNotice('not_bookable');
      $('booking-form').hidden = false;
      return loadWindow(null).then(resumeAttempt);
    }).catch(function () { showNotice('failed'); });

    $('booking-form').addEventListener('submit', submit);
    $('date').addEventListener('change', function () { if ($('date').value) showDay($('date').value); });
    $('timezone').addEventListener('change', function () {
      state.tz = $('timezone').value;
      loadWindow(state.date);
    });
  }

  start();
})();
`;
