// status.mjs - the status page (#/status), where the installed app opens
// (manifest.webmanifest's start_url): the machines up, down or busy (who
// holds them), the running matrix with its progress and live bitrate, the
// last matrices with their ok and failed runs (links to the failed runs'
// pages) and, for admins, the newest notifications the rules sent.
//
// Live: the app's stream (host.state, action.state, matrix.state) makes the
// page read the API again (once for a burst), and so does a timer every 30 s.
// The running matrix is followed like its own page does: a LiveStream of its
// events (live.mjs) feeding the matrix page's NowRunning (the current run,
// each side's latest bitrate) and MatrixProgress; no second mechanism.
//
// Offline: the shell comes from the service worker's cache (sw.js; API
// replies are never cached there).  What the page last read is kept in this
// tab's sessionStorage (what the page shows: no token, no CSRF token, no
// error texts of notification sinks), so a reload without network still
// shows it, under "Offline since HH:MM (N min)".  Offline is the browser
// saying so or testbedd not answering; the page tries again every 5 s and
// when the browser is back online, and the banner goes once testbedd answers.

import { api } from './api.mjs';
import { h, replace } from './dom.mjs';
import { MATRIX_ENDED, statePill } from './format.mjs';
import { LiveStream } from './live.mjs';
import { MatrixProgress } from './matrixprogress.mjs';
import { NowRunning } from './nowrunning.mjs';
import { RunsTable } from './runstable.mjs';
import { absolute, duration, since } from './time.mjs';

const KEY = 'testbedd.status';               // the last snapshot (JSON)
const OFFLINE_KEY = 'testbedd.offline-since'; // ms since the epoch
const POLL_MS = 30_000;
const RETRY_MS = 5_000;
const RECENT = 6;             // matrices under "Last results"
const FAILED_SHOWN = 5;       // failed runs listed per matrix
const NOTES = 8;              // deliveries under "Recent notifications"
const NOTE_PILL = { delivered: 'pill-ok', failed: 'pill-failed', pending: 'pill-queued' };
const APP_EVENTS = ['host.state', 'action.state', 'matrix.state', 'reset'];
const RUN_KEYS = ['state', 'error_class', 'error_message', 'sender_bps', 'receiver_bps', 'retransmits',
  'lost_percent', 'client_command', 'server_command'];

function load() {
  try { return JSON.parse(sessionStorage.getItem(KEY) ?? 'null'); } catch { return null; }
}

/**
 * The session the last snapshot was read with ({name, role}), or null: lets
 * the app show this page offline, where whoami cannot answer.
 */
export function offlineSession() {
  const s = load()?.session;
  return s && typeof s.name === 'string' && typeof s.role === 'string' ? { name: s.name, role: s.role } : null;
}

/** Forget the snapshot (logging out). */
export function forgetStatus() {
  try {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(OFFLINE_KEY);
  } catch { /* no storage */ }
}

/** Show the status page in main; returns the function that stops it. */
export function renderStatus(main, ctx) {
  const page = new StatusPage(main, ctx);
  return () => page.stop();
}

/** "16:05" in the browser's time zone. */
function hhmm(ms) {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

/** "3 min", "2 h 5 min": how long since ms, in whole minutes. */
function minutes(ms) {
  const gone = Math.max(0, Date.now() - ms);
  return gone < 3_600_000 ? `${Math.floor(gone / 60_000)} min` : duration(gone);
}

function relTime(value) {
  return h('time', { datetime: value, title: absolute(value), dataset: { rel: '' } }, since(value) ?? '');
}

class StatusPage {
  #ctx;
  #snap = load();          // what is shown: {at, session, hosts, running, recent, failures, notes}
  #offlineSince = null;    // ms, or null while testbedd answers
  #stopped = false;
  #busy = false;           // a refresh is under way
  #again = false;          // another was asked for meanwhile
  #soon = null;            // the debounce of app events
  #timer = null;           // the next poll or retry
  #ticker;
  #failures = new Map();   // ended matrix id -> its failed runs (they do not change any more)
  #running = new Running(() => this.#refreshSoon());
  #banner = h('p', { class: 'st-offline', role: 'status', hidden: true });
  #updated = h('p', { class: 'st-updated muted' });
  #error = h('p', { class: 'alert', role: 'alert', hidden: true });
  #hostSummary = h('p', { class: 'summary' });
  #hosts = h('ul', { class: 'st-hosts', 'aria-label': 'Machines' });
  #recent = h('ul', { class: 'st-recent', 'aria-label': 'Last matrices' });
  #notes = h('section', { class: 'st-section st-notes', 'aria-labelledby': 'st-notes-title', hidden: true });
  #onEvent = () => this.#refreshSoon();
  #onOnline = () => this.#refresh();
  #onOffline = () => { this.#wentOffline(); this.#draw(); };

  constructor(main, ctx) {
    this.#ctx = ctx;
    replace(main,
      h('div', { class: 'page-head' }, h('h1', {}, 'Status'), this.#updated),
      this.#banner, this.#error,
      h('section', { class: 'st-section', 'aria-labelledby': 'st-hosts-title' },
        h('div', { class: 'section-head' }, h('h2', { id: 'st-hosts-title' }, 'Machines'), this.#hostSummary),
        this.#hosts),
      this.#running.el,
      h('section', { class: 'st-section', 'aria-labelledby': 'st-recent-title' },
        h('div', { class: 'section-head' }, h('h2', { id: 'st-recent-title' }, 'Last results'),
          h('a', { href: '#/matrices' }, 'All matrices')),
        this.#recent),
      this.#notes);
    const saved = Number(sessionStorage.getItem(OFFLINE_KEY));
    if (saved > 0) this.#offlineSince = saved;
    if (!navigator.onLine) this.#wentOffline();
    for (const t of APP_EVENTS) ctx.live?.addEventListener(t, this.#onEvent);
    window.addEventListener('online', this.#onOnline);
    window.addEventListener('offline', this.#onOffline);
    this.#ticker = setInterval(() => {
      for (const el of main.querySelectorAll('time[data-rel]')) el.textContent = since(el.dateTime) ?? '';
      this.#drawBanner();
    }, 15_000);
    this.#draw();
    this.#refresh();
  }

  stop() {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#soon);
    clearInterval(this.#ticker);
    this.#running.follow(null);
    for (const t of APP_EVENTS) this.#ctx.live?.removeEventListener(t, this.#onEvent);
    window.removeEventListener('online', this.#onOnline);
    window.removeEventListener('offline', this.#onOffline);
  }

  #refreshSoon() {
    clearTimeout(this.#soon);
    this.#soon = setTimeout(() => this.#refresh(), 700);
  }

  #wentOffline() {
    if (this.#offlineSince !== null) return;
    this.#offlineSince = Date.now();
    try { sessionStorage.setItem(OFFLINE_KEY, String(this.#offlineSince)); } catch { /* no storage */ }
  }

  #backOnline() {
    this.#offlineSince = null;
    try { sessionStorage.removeItem(OFFLINE_KEY); } catch { /* no storage */ }
  }

  /** Read everything again; offline (or testbedd silent): keep what is shown and try again in 5 s. */
  async #refresh() {
    if (this.#stopped) return;
    if (this.#busy) { this.#again = true; return; }
    this.#busy = true;
    clearTimeout(this.#timer);
    let next = POLL_MS;
    try {
      const snap = await this.#read();
      if (this.#stopped) return;
      this.#snap = snap;
      this.#backOnline();
      this.#error.hidden = true;
      try { sessionStorage.setItem(KEY, JSON.stringify(snap)); } catch { /* full or no storage */ }
    } catch (err) {
      if (this.#stopped || err.status === 401) return;   // the app shows the login page
      if (err.status === 0 || !navigator.onLine) {
        this.#wentOffline();
        next = RETRY_MS;
      } else {
        this.#error.textContent = `Could not read the status: ${err.message}`;
        this.#error.hidden = false;
      }
    } finally {
      this.#busy = false;
    }
    this.#draw();
    if (this.#again) {
      this.#again = false;
      this.#refresh();
      return;
    }
    this.#timer = setTimeout(() => this.#refresh(), next);
  }

  /** The snapshot from the API (throws an ApiError). */
  async #read() {
    const admin = this.#ctx.isAdmin();
    const [hosts, running, recent, rules, deliveries] = await Promise.all([
      api('GET', 'hosts'),
      api('GET', 'matrices?state=running&limit=1'),
      api('GET', `matrices?limit=${RECENT}`),
      admin ? api('GET', 'notifications') : null,
      admin ? api('GET', `notifications/deliveries?limit=${NOTES}`) : null,
    ]);
    const failures = {};
    await Promise.all(recent.matrices.filter((m) => m.progress?.failed > 0).map(async (m) => {
      failures[m.id] = await this.#failedRuns(m);
    }));
    return {
      at: Date.now(),
      session: this.#ctx.session ? { name: this.#ctx.session.name, role: this.#ctx.session.role } : null,
      hosts: hosts.hosts.map((x) => ({
        name: x.name,
        state: {
          reachability: x.state?.reachability ?? 'unknown', phase: x.state?.phase ?? null, os: x.state?.os ?? null,
          since: x.state?.since ?? null,
          held_by: x.state?.held_by ? { kind: x.state.held_by.kind, id: x.state.held_by.id, by: x.state.held_by.by,
            holder: x.state.held_by.holder, since: x.state.held_by.since } : null,
        },
      })),
      running: running.matrices[0] ? brief(running.matrices[0]) : null,
      recent: recent.matrices.map(brief),
      failures,
      // the log without last_error: a sink's error text stays on the Notifications page
      notes: admin ? {
        rules: Object.fromEntries(rules.rules.map((r) => [r.id, { name: r.name, failing: r.failing }])),
        deliveries: deliveries.deliveries.map((d) => ({
          id: d.id, rule: d.rule, trigger: d.trigger, title: d.title, state: d.state, attempts: d.attempts,
          created_at: d.created_at,
        })),
      } : null,
    };
  }

  /** The first failed runs of matrix m (an ended matrix's are read once). */
  async #failedRuns(m) {
    const known = this.#failures.get(m.id);
    if (known) return known;
    const { matrix } = await api('GET', `matrices/${m.id}`);
    const list = (matrix.runs ?? []).filter((r) => r.state === 'failed').sort((a, b) => a.seq - b.seq)
      .slice(0, FAILED_SHOWN).map((r) => ({
        id: r.id, seq: r.seq, client: r.client, server: r.server, protocol: r.protocol, direction: r.direction,
        error_class: r.error_class,
      }));
    if (MATRIX_ENDED.has(matrix.state)) this.#failures.set(m.id, list);
    return list;
  }

  // ---------------------------------------------------------------- drawing

  #draw() {
    this.#drawBanner();
    const s = this.#snap;
    if (!s) {
      this.#hostSummary.textContent = '';
      replace(this.#hosts, h('li', { class: 'muted' }, this.#offlineSince ? 'Nothing read yet.' : 'Loading…'));
      return;
    }
    this.#drawHosts(s.hosts);
    this.#running.follow(this.#offlineSince === null ? s.running : null, s.running);
    this.#drawRecent(s);
    this.#drawNotes(s.notes);
  }

  #drawBanner() {
    const s = this.#snap;
    const off = this.#offlineSince;
    this.#banner.hidden = off === null;
    document.documentElement.dataset.statusOffline = off === null ? 'false' : 'true';
    if (off !== null) {
      replace(this.#banner, h('strong', {}, `Offline since ${hhmm(off)} (${minutes(off)})`),
        s ? `: what testbedd said at ${hhmm(s.at)}. ` : ': nothing read yet. ',
        'The page updates by itself when testbedd answers again.');
    }
    this.#updated.textContent = s ? `Updated ${hhmm(s.at)}` : '';
    this.#updated.title = s ? absolute(new Date(s.at).toISOString()) : '';
  }

  #drawHosts(hosts) {
    const up = hosts.filter((x) => x.state.reachability === 'up').length;
    const down = hosts.filter((x) => x.state.reachability === 'down').length;
    const busy = hosts.filter((x) => x.state.held_by).length;
    const parts = [`${hosts.length} machine${hosts.length === 1 ? '' : 's'}`, `${up} up`, `${down} down`, `${busy} busy`];
    const unknown = hosts.length - up - down;
    if (unknown) parts.push(`${unknown} not probed yet`);
    this.#hostSummary.textContent = parts.join(' · ');
    if (hosts.length === 0) {
      replace(this.#hosts, h('li', { class: 'muted' }, 'The inventory has no machines.'));
      return;
    }
    replace(this.#hosts, hosts.map(({ name, state: st }) => {
      const held = st.held_by;
      const phase = { powering_on: 'powering on', booting: 'booting', shutting_down: 'shutting down' }[st.phase];
      return h('li', { class: 'st-host', dataset: { host: name, reachability: st.reachability, busy: held ? 'true' : 'false' } },
        h('div', { class: 'st-host-head' },
          h('a', { class: 'st-host-name', href: '#/hosts' }, name),
          phase ? h('span', { class: 'phase' }, phase) : null,
          h('span', { class: `badge badge-${st.reachability}` }, st.reachability)),
        h('p', { class: 'st-host-line' }, hostLine(st)),
        held ? h('p', { class: 'st-held', title: held.holder },
          h('span', { class: 'pill pill-running' }, 'busy'), ' ',
          held.kind === 'matrix' ? h('a', { href: `#/matrices/${held.id}` }, `matrix ${held.id}`)
            : held.kind ? `${held.kind} ${held.id}` : held.holder,
          held.by ? ` by ${held.by}` : null) : null);
    }));
  }

  #drawRecent(s) {
    if (s.recent.length === 0) {
      replace(this.#recent, h('li', { class: 'muted' }, 'No matrix has run yet.'));
      return;
    }
    replace(this.#recent, s.recent.map((m) => {
      const p = m.progress ?? {};
      const failed = s.failures?.[m.id] ?? [];
      const when = m.finished_at ?? m.started_at ?? m.created_at;
      return h('li', { class: 'st-matrix', dataset: { matrix: String(m.id), state: m.state } },
        h('div', { class: 'st-matrix-head' },
          h('a', { href: `#/matrices/${m.id}` }, m.name), ' ', h('span', { class: 'muted' }, `#${m.id}`), ' ',
          statePill(m.state)),
        h('p', { class: 'st-counts' },
          h('span', { class: p.ok ? 'st-ok' : null }, `${p.ok ?? 0} ok`), ' · ',
          h('span', { class: p.failed ? 'st-failed' : null }, `${p.failed ?? 0} failed`),
          ` of ${p.total ?? 0} runs`,
          when ? [' · ', m.finished_at ? 'ended ' : m.started_at ? 'started ' : 'queued ', relTime(when), ' ago'] : null),
        failed.length ? h('ul', { class: 'st-failed-runs', 'aria-label': `Failed runs of matrix ${m.id}` },
          failed.map((r) => h('li', {},
            h('a', { href: `#/runs/${r.id}` }, `run ${r.seq}`), ` ${r.client} → ${r.server} ${r.protocol} ${r.direction}`,
            r.error_class ? [' ', h('code', { class: 'code' }, r.error_class)] : null)),
          p.failed > failed.length ? h('li', { class: 'muted' },
            h('a', { href: `#/matrices/${m.id}` }, `${p.failed - failed.length} more`)) : null) : null);
    }));
  }

  #drawNotes(notes) {
    this.#notes.hidden = !notes;
    if (!notes) return;
    const failing = Object.values(notes.rules).filter((r) => r.failing);
    replace(this.#notes,
      h('div', { class: 'section-head' }, h('h2', { id: 'st-notes-title' }, 'Recent notifications'),
        h('a', { href: '#/notifications' }, 'Rules')),
      failing.length ? h('p', { class: 'alert' },
        `Failing: ${failing.map((r) => r.name).join(', ')} (their messages do not go out: see the rules).`) : null,
      notes.deliveries.length === 0 ? h('p', { class: 'muted' }, 'No notification sent yet.')
        : h('ul', { class: 'st-deliveries', 'aria-label': 'Newest notifications' },
          notes.deliveries.map((d) => h('li', { dataset: { delivery: String(d.id), state: d.state } },
            h('span', { class: `pill ${NOTE_PILL[d.state] ?? ''}` }, d.state), ' ',
            h('span', { class: 'st-note-title' }, d.title ?? d.trigger), ' ',
            h('span', { class: 'muted' }, `${notes.rules[d.rule]?.name ?? `rule ${d.rule}`} · `, relTime(d.created_at), ' ago')))));
  }
}

/** "as ubuntu for 3 min", "down for 2 h", "not probed yet". */
function hostLine(st) {
  const since = st.since ? [' for ', relTime(st.since)] : null;
  if (st.reachability === 'up') return [st.os ? ['as ', h('strong', {}, st.os)] : 'up', since];
  return st.reachability === 'down' ? ['down', since] : 'not probed yet';
}

/** The fields of a matrix the page shows and keeps. */
function brief(m) {
  return {
    id: m.id, name: m.name, state: m.state, progress: m.progress, created_at: m.created_at, started_at: m.started_at,
    finished_at: m.finished_at, error: m.error ? { code: m.error.code, message: m.error.message } : null,
  };
}

/**
 * The running matrix: its progress and the current run with its latest
 * bitrate, from a LiveStream of its events into NowRunning and
 * MatrixProgress (as on its own page).  onEnd() when it ends.
 */
class Running {
  #onEnd;
  #id = null;
  #m = null;
  #live = null;
  #runs = null;
  #now = null;
  #progress = new MatrixProgress();
  #loaded = false;
  #queue = [];
  #generation = 0;
  #ticker = null;
  #title = h('h2', { id: 'st-running-title' }, 'Running matrix');
  #link = h('p', { class: 'st-running-name' });
  #slot = h('div');
  #offline = h('p', { class: 'muted', hidden: true }, 'The live bitrate comes back with the network.');

  constructor(onEnd) {
    this.#onEnd = onEnd;
    this.el = h('section', { class: 'st-section st-running', 'aria-labelledby': 'st-running-title', hidden: true },
      h('div', { class: 'section-head' }, this.#title), this.#link, this.#progress.nodes, this.#offline, this.#slot);
  }

  /**
   * Follow matrix m live (null: none, or offline); shown: what to show when
   * not following (the snapshot's running matrix, offline).
   */
  follow(m, shown = m) {
    if (!m || m.id !== this.#id) this.#stop();
    this.el.hidden = !shown;
    this.#offline.hidden = Boolean(m) || !shown;
    if (!shown) return;
    if (!m) {          // offline: the last progress read, no live tail
      this.#drawHead(shown);
      this.#progress.take(shown);
      this.#progress.draw(shown);
      return;
    }
    if (this.#id === m.id) {
      if (!this.#loaded) this.#set(m);
      return;
    }
    this.#start(m);
  }

  #stop() {
    this.#generation += 1;
    this.#live?.stop();
    this.#live = null;
    this.#now?.stop();
    clearInterval(this.#ticker);
    this.#ticker = null;
    this.#id = null;
    this.#m = null;
    this.#loaded = false;
    this.#queue = [];
    replace(this.#slot);
  }

  #start(m) {
    this.#id = m.id;
    this.#runs = new RunsTable(m.id, (r) => { location.hash = `#/runs/${r.id}`; });
    this.#now = new NowRunning(this.#runs, () => this.#m, (r) => { location.hash = `#/runs/${r.id}`; }, { plots: false });
    replace(this.#slot, this.#now.el);
    this.#set(m);
    const live = new LiveStream(['matrix.state', 'matrix.boot', 'run.state', 'run.interval'], { matrix: m.id });
    const onEvent = (e) => { if (this.#loaded) this.#apply(e.detail); else this.#queue.push(e.detail); };
    for (const t of ['matrix.state', 'matrix.boot', 'run.state', 'run.interval']) live.addEventListener(t, onEvent);
    live.addEventListener('reset', () => { this.#queue = []; this.#load(); });
    live.start();
    this.#live = live;
    const mine = this.#generation;
    live.whenOpen(2000).then(() => { if (mine === this.#generation) this.#load(); });
    this.#ticker = setInterval(() => { if (this.#m?.state === 'running') this.#progress.draw(this.#m); }, 1000);
  }

  #set(m) {
    this.#m = { ...(this.#m ?? {}), ...m };
    this.#progress.take(m);
    this.#drawHead(this.#m);
    this.#progress.draw(this.#m);
  }

  #drawHead(m) {
    this.#title.textContent = m.state === 'queued' ? 'Queued matrix' : 'Running matrix';
    replace(this.#link, h('a', { href: `#/matrices/${m.id}` }, m.name), ' ', h('span', { class: 'muted' }, `#${m.id}`), ' ',
      statePill(m.state));
  }

  async #load() {
    const mine = ++this.#generation;
    this.#loaded = false;
    try {
      const { matrix } = await api('GET', `matrices/${this.#id}`);
      if (mine !== this.#generation) return;
      const { runs, ...rest } = matrix;
      this.#now.clear();
      this.#runs.load(runs ?? []);
      this.#set(rest);
      this.#now.loaded(rest.progress?.current_seq);
      this.#loaded = true;
      const pending = this.#queue;
      this.#queue = [];
      for (const ev of pending) this.#apply(ev);
      this.#now.draw();
    } catch (err) {
      if (mine === this.#generation && err.status !== 401) this.#queue = [];   // the page's next read tries again
    }
  }

  #apply(ev) {
    const d = ev.data;
    if (d.matrix !== this.#id) return;
    if (ev.type === 'matrix.state') {
      this.#set({ state: d.state, progress: d.progress ?? this.#m?.progress });
      if (d.progress) this.#now.pick(d.progress.current_seq);
      this.#now.draw();
      if (MATRIX_ENDED.has(d.state)) this.#onEnd();
    } else if (ev.type === 'run.state') {
      if (!this.#runs.has(d.run)) { this.#load(); return; }
      this.#runs.update(d.run, d, RUN_KEYS);
      this.#now.runState(d);
    } else if (ev.type === 'matrix.boot') {
      this.#now.boot(d);
    } else if (ev.type === 'run.interval') {
      this.#now.interval(d);
    }
  }
}
