// console.mjs - the console page (console.html#NAME): the machine's serial
// console in xterm.js, live from GET /api/v1/hosts/NAME/console (its own
// server-sent events: a state event, the scrollback, then live bytes in
// base64), typing through POST .../console/input while this caller holds the
// lease (POST/DELETE .../console/lease; an admin may take it over), Ctrl-C and
// Break buttons and a key row for phones (Esc, Tab, a sticky Ctrl, arrows),
// the lease holder and the reader's state shown, and the kept boot logs.

import { Terminal } from '../vendor/xterm.mjs';
import { FitAddon } from '../vendor/addon-fit.mjs';
import { api } from './api.mjs';

const $ = (id) => document.getElementById(id);
const host = decodeURIComponent(location.hash.slice(1));
let me = null;          // {name, role}
let state = null;       // the last ConsoleState
let stream = null;      // EventSource
let ctrlNext = false;   // the Ctrl key of the key row: the next key is a control character
let sending = Promise.resolve();

let protocol = null; // the inventory's protocol of a tcp console (host JSON console.protocol)
const canOperate = () => me && (me.role === 'operator' || me.role === 'admin');
const holding = () => state?.lease && me && state.lease.holder === me.name;

function fromBase64(b64) {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

function say(text, isError = false) {
  const el = $('status');
  el.replaceChildren();
  const span = document.createElement('span');
  if (isError) span.className = 'err';
  span.textContent = text;
  el.append(span);
}

function drawState() {
  const conn = $('conn');
  if (!state) return;
  conn.dataset.state = state.connected ? 'live' : 'reconnecting';
  conn.textContent = state.connected ? 'connected' : 'not connected';
  const parts = [];
  if (!state.connected) parts.push(`the console is not connected${state.last_error ? `: ${state.last_error}` : ''} (testbedd retries)`);
  if (state.lease) parts.push(holding() ? 'you hold the lease: typing goes to the console' : `${state.lease.holder} holds the lease (since ${state.lease.since})`);
  else parts.push(canOperate() ? 'nobody holds the lease: take it to type' : 'view only (typing needs the operator role)');
  parts.push(`${state.viewers} watching`);
  say(parts.join(' · '), !state.connected);
  const lease = $('lease');
  lease.hidden = !canOperate();
  if (holding()) lease.textContent = 'Release';
  else if (state.lease && me?.role === 'admin') lease.textContent = `Take over from ${state.lease.holder}`;
  else if (state.lease) lease.textContent = `Leased to ${state.lease.holder}`;
  else lease.textContent = 'Take the lease';
  lease.disabled = Boolean(state.lease && !holding() && me?.role !== 'admin');
  for (const b of document.querySelectorAll('#keys [data-key], #ctrl')) b.disabled = !holding();
  // raw TCP carries bytes only: no Break (a device console has one, a telnet
  // console sends RFC 2217's, IPMI SOL ipmitool's ~B at the start of a line)
  const brk = document.querySelector('#keys [data-key="break"]');
  if (brk && state.type === 'tcp' && protocol !== 'telnet') {
    brk.disabled = true;
    brk.title = 'This console is raw TCP, which has no Break (a serial device or telnet console has one)';
  } else if (brk) {
    brk.title = state.type === 'ipmi-sol' ? 'Send a Break over SOL (at the start of a line)' : 'Send a serial Break';
  }
}

/** Send input in order, one request at a time. */
function send(body) {
  sending = sending.then(() => api('POST', `hosts/${encodeURIComponent(host)}/console/input`, body))
    .catch((err) => say(err.message, true));
  return sending;
}

function typed(data) {
  if (!holding()) {
    say(canOperate() ? 'take the lease to type' : 'view only', true);
    return;
  }
  if (ctrlNext && data.length === 1) {
    const c = data.toUpperCase().charCodeAt(0);
    if (c >= 64 && c < 96) data = String.fromCharCode(c - 64);
    ctrlNext = false;
    $('ctrl').setAttribute('aria-pressed', 'false');
  }
  send({ text: data });
}

async function toggleLease() {
  const path = `hosts/${encodeURIComponent(host)}/console/lease`;
  try {
    if (holding()) await api('DELETE', path);
    else await api('POST', path, state?.lease && me.role === 'admin' ? { takeover: true } : {});
  } catch (err) {
    say(err.message, true);
  }
}

async function loadLogs() {
  const list = $('loglist');
  try {
    const { logs } = await api('GET', `hosts/${encodeURIComponent(host)}/console/logs`);
    list.replaceChildren(...logs.map((l) => {
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.href = `api/v1/hosts/${encodeURIComponent(host)}/console/logs/${encodeURIComponent(l.id)}`;
      a.download = `${host}-${l.id}.log`;
      a.textContent = `${l.started} ${l.reason}`;
      li.append(a, ` (${l.bytes} bytes)`);
      return li;
    }));
    if (!logs.length) list.textContent = 'none yet';
  } catch (err) {
    list.textContent = err.message;
  }
}

function openStream(term) {
  stream = new EventSource(`api/v1/hosts/${encodeURIComponent(host)}/console`);
  stream.addEventListener('output', (ev) => term.write(fromBase64(ev.data)));
  stream.addEventListener('state', (ev) => {
    state = JSON.parse(ev.data);
    drawState();
  });
  // A reload of the inventory changed or removed this console: testbedd
  // ends the stream with an "end" event saying why.  A changed console is
  // there again when the browser reconnects; a removed one answers 404 and
  // the EventSource gives up (CLOSED): say so instead of "reconnecting…".
  let ended = '';
  stream.addEventListener('end', (ev) => {
    try { ended = JSON.parse(ev.data).reason || ''; } catch { ended = ''; }
  });
  stream.onerror = () => {
    const closed = stream.readyState === EventSource.CLOSED;
    $('conn').dataset.state = closed ? 'closed' : 'reconnecting';
    $('conn').textContent = closed ? 'closed' : 'reconnecting…';
    if (closed) say(`${ended || 'the console stream ended'}: this console is gone (reload the page to try again)`, true);
  };
}

async function main() {
  if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(host)) {
    say('no such machine: open a console from the hosts page', true);
    return;
  }
  $('title').textContent = `${host} console`;
  document.title = `${host} console · testbedd`;
  try {
    const who = await api('GET', 'whoami', undefined, { quiet401: true });
    me = { name: who.token.name, role: who.token.role };
  } catch (err) {
    if (err.status === 401) location.replace('./#/login');
    else say(err.message, true);
    return;
  }
  try {
    protocol = (await api('GET', `hosts/${encodeURIComponent(host)}`)).host?.console?.protocol ?? null;
  } catch {
    protocol = null; // the console's state still says its type
  }
  const term = new Terminal({ scrollback: 5000, fontSize: 14, lineHeight: 1.15, convertEol: false, cursorBlink: true,
    fontFamily: 'ui-monospace, "DejaVu Sans Mono", "Liberation Mono", Menlo, monospace' });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open($('term'));
  fit.fit();
  window.addEventListener('resize', () => fit.fit());
  term.onData(typed);
  $('lease').addEventListener('click', toggleLease);
  $('ctrl').addEventListener('click', () => {
    ctrlNext = !ctrlNext;
    $('ctrl').setAttribute('aria-pressed', String(ctrlNext));
    term.focus();
  });
  for (const b of document.querySelectorAll('#keys [data-key]')) {
    b.addEventListener('click', () => {
      send({ key: b.dataset.key });
      term.focus();
    });
  }
  $('logs').addEventListener('toggle', () => { if ($('logs').open) loadLogs(); });
  drawState();
  openStream(term);
}

main();
