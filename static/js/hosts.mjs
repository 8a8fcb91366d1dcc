// hosts.mjs - every machine with its OS personas and live state: the page
// that composes the host cards (hostcard.mjs) and keeps them in step with
// the daemon.
//
// GET /api/v1/hosts gives the inventory and each machine's state; host.state
// events from the live stream replace a machine's state as it changes.  The
// stream is opened before the list is fetched and events that arrive while
// the list loads are applied after it, in order, so no change falls between
// the two.  A `reset` event (testbedd dropped events we had not seen) makes
// the page fetch the list again.  Power and boot (buttons, the running
// action, recent actions) are actions.mjs's: action.state and action.step
// events go there, through the same queue.  The BMC's view and the idle
// power-off countdown are hostpower.mjs's: host.bmc events update them, and
// the host is re-read after its state or an action changes (and every 15 s,
// since "checked 12 s ago" moves without events: hostrefresh.mjs).
// reservation.* events make the page read GET /api/v1/reservations again
// (once for a burst) and give each card its granted and queued ones; the
// buttons and the dialog to reserve are hostreserve.mjs's.

import { ActionBoard } from './actions.mjs';
import { api } from './api.mjs';
import { announce, h, replace } from './dom.mjs';
import { HostCard } from './hostcard.mjs';
import { TrustDialog } from './hostkey.mjs';
import { tickPower } from './hostpower.mjs';
import { HostRefresh } from './hostrefresh.mjs';
import { ReserveDialog } from './hostreserve.mjs';
import { stateSentence } from './hoststate.mjs';
import { since } from './time.mjs';

const RESERVATION_EVENTS = ['reservation.granted', 'reservation.queued', 'reservation.released',
  'reservation.broken', 'reservation.expired'];
const EVENT_TYPES = ['host.state', 'host.bmc', 'action.state', 'action.step', ...RESERVATION_EVENTS];

/** Show the hosts in main; returns the function that stops the page. */
export function renderHosts(main, ctx) {
  const page = new HostsPage(main, ctx);
  return () => page.stop();
}

class HostsPage {
  #main;
  #ctx;
  #cards = new Map();      // name -> HostCard
  #loaded = false;
  #queue = [];             // events that came before the fetch
  #generation = 0;         // a fetch of an older generation is dropped
  #status = h('p', { class: 'muted', role: 'status' }, 'Loading the machines…');
  #summary = h('p', { class: 'summary' });
  #list = h('ul', { class: 'hosts', 'aria-label': 'Machines' });
  #dialog = new TrustDialog();
  #reserve = new ReserveDialog();
  #resvTimer = null;       // a pending read of the reservations
  #board;
  #cardParts;              // what every card shares
  #refresh;
  #timers;
  #onEvent = (e) => { if (this.#loaded) this.#apply(e.detail); else this.#queue.push(e.detail); };
  #onReset = () => { this.#queue = []; this.#load(); };

  constructor(main, ctx) {
    this.#main = main;
    this.#ctx = ctx;
    this.#board = new ActionBoard(ctx);
    this.#cardParts = {
      board: this.#board, ctx, dialog: this.#dialog, onTrusted: (name, host) => this.#trusted(name, host),
      reserve: this.#reserve,
    };
    replace(main,
      h('div', { class: 'page-head' },
        h('h1', {}, 'Hosts'),
        this.#summary),
      this.#status,
      this.#list,
      this.#dialog.el,
      this.#reserve.el,
      this.#board.dialogEl);
    this.#timers = [
      setInterval(() => {
        for (const el of main.querySelectorAll('time[data-rel]')) el.textContent = since(el.dateTime) ?? '';
      }, 10_000),
      setInterval(() => tickPower(main), 1000),
    ];
    this.#refresh = new HostRefresh({
      known: (name) => this.#cards.has(name),
      active: () => this.#loaded,
      onHost: (name, host) => this.#cards.get(name)?.setPower(host),
    });
    this.#listen();
  }

  stop() {
    this.#generation += 1;
    for (const t of this.#timers) clearInterval(t);
    clearTimeout(this.#resvTimer);
    this.#reserve.el.close();
    this.#refresh.stop();
    this.#board.destroy();
    for (const t of EVENT_TYPES) this.#ctx.live?.removeEventListener(t, this.#onEvent);
    this.#ctx.live?.removeEventListener('reset', this.#onReset);
  }

  #listen() {
    const { live } = this.#ctx;
    for (const t of EVENT_TYPES) live?.addEventListener(t, this.#onEvent);
    live?.addEventListener('reset', this.#onReset);
    // Open the stream first, so nothing that changes while the list loads is missed.
    (live ? live.whenOpen(2000) : Promise.resolve()).then(() => { if (this.#generation === 0) this.#load(); });
  }

  async #load() {
    const mine = ++this.#generation;
    this.#loaded = false;
    try {
      const reply = await api('GET', 'hosts');
      if (mine !== this.#generation) return;
      this.#cards.clear();
      replace(this.#list, reply.hosts.map((host) => {
        const card = new HostCard(host, this.#cardParts);
        this.#cards.set(host.name, card);
        return card.el;
      }));
      this.#reserve.setHosts(reply.hosts.map((host) => host.name));
      this.#status.hidden = true;
      if (reply.hosts.length === 0) {
        this.#status.textContent = 'The inventory has no machines.';
        this.#status.hidden = false;
      }
      this.#loaded = true;
      const pending = this.#queue;
      this.#queue = [];
      for (const ev of pending) this.#apply(ev);
      this.#drawSummary();
      this.#board.seed();
      this.#rereadReservations();
    } catch (err) {
      if (mine !== this.#generation) return;
      if (err.status === 401) return;   // the app shows the login page
      this.#status.textContent = `Could not load the machines: ${err.message}`;
      this.#status.className = 'alert';
      this.#status.hidden = false;
    }
  }

  #apply(ev) {
    if (RESERVATION_EVENTS.includes(ev.type)) {
      this.#rereadReservations();
      return;
    }
    if (ev.type === 'action.state' || ev.type === 'action.step') {
      this.#board.onEvent(ev);
      if (ev.type === 'action.state') this.#refresh.reread(ev.host);
      return;
    }
    const card = this.#cards.get(ev.host);
    if (!card) {
      // A machine we do not know: the inventory was reloaded.
      this.#load();
      return;
    }
    if (ev.type === 'host.bmc') {
      card.setBmc(ev.data);
      return;
    }
    const before = card.host.state;
    card.setState(ev.data);
    this.#refresh.reread(card.host.name);
    this.#drawSummary();
    if (before?.reachability !== ev.data.reachability || before?.os !== ev.data.os)
      announce(`${card.host.name} is now ${stateSentence(ev.data)}`);
  }

  /** Read GET /reservations 200 ms from now (once for a burst) and give each card its own. */
  #rereadReservations() {
    if (this.#resvTimer !== null) return;
    this.#resvTimer = setTimeout(async () => {
      this.#resvTimer = null;
      let list;
      try {
        ({ reservations: list } = await api('GET', 'reservations'));
      } catch { return; }  // the 15 s read of the list brings the granted ones
      for (const [name, card] of this.#cards) {
        const mine = list.filter((r) => r.hosts.includes(name));
        const g = mine.find((r) => r.state === 'granted');
        card.setReservations(g ? { id: g.id, owner: g.owner, until: g.until, note: g.note } : null,
          mine.filter((r) => r.state === 'queued'));
      }
    }, 200);
  }

  /** A key of machine name was trusted: host is the machine as it is now. */
  #trusted(name, host) {
    const card = this.#cards.get(name);
    if (!card) return;
    card.setHost(host);
    this.#drawSummary();
  }

  #drawSummary() {
    const cards = this.#cards;
    const counts = { up: 0, down: 0, unknown: 0 };
    for (const { host } of cards.values()) counts[host.state?.reachability ?? 'unknown'] += 1;
    const parts = [`${cards.size} machine${cards.size === 1 ? '' : 's'}`, `${counts.up} up`, `${counts.down} down`];
    if (counts.unknown) parts.push(`${counts.unknown} not probed yet`);
    this.#summary.textContent = parts.join(' · ');
  }
}
