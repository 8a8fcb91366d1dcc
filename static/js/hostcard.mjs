// hostcard.mjs - one machine on the hosts page: a card that composes its
// parts, top to bottom: the head (name, role, phase, badge) and the prober's
// state (hoststate.mjs, with a refused key from hostkey.mjs), the BMC, idle
// and wake lines (hostpower.mjs), power and boot (the page's ActionBoard,
// actions.mjs), the OS personas (hostpersonas.mjs), the inventory's facts
// (hostfacts.mjs) and the recent actions.  The card keeps its host object
// and draws the state again only when it changed.

import { announce, h, replace } from './dom.mjs';
import { hostFacts } from './hostfacts.mjs';
import { refusedKey } from './hostkey.mjs';
import { HostPersonas } from './hostpersonas.mjs';
import { drawPower } from './hostpower.mjs';
import { queueLines, reserveButtons } from './hostreserve.mjs';
import { HostState } from './hoststate.mjs';
import { absolute } from './time.mjs';

export class HostCard {
  host;                    // the GET /api/v1/hosts entry, kept up to date
  el;                      // the <li>
  #parts;                  // {board (ActionBoard), ctx, dialog (TrustDialog), onTrusted(name, host), reserve (ReserveDialog)}
  #state;
  #powerEl;
  #personas;
  #stateKey = null;        // the state drawn, as JSON
  #resvEl;                 // the reservation line (POST /reservations)
  #queueEl;                // the reservations queued for it
  #resvButtons;            // Reserve…, Release, Break (hostreserve.mjs)
  #queued = [];            // GET /reservations' queued ones naming it
  #resvKey = null;         // the reservations drawn, as JSON

  constructor(host, parts) {
    this.host = host;
    this.#parts = parts;
    this.el = h('li', { class: 'host', id: `host-${host.name}`, dataset: { host: host.name } });
    this.draw();
  }

  /** Take host anew (a key was trusted) and draw the whole card again. */
  setHost(host) {
    this.host = host;
    this.draw();
  }

  /** Take a host.state event's state. */
  setState(st) {
    this.host.state = st;
    this.#parts.board.hostChanged(this.host);
    this.#drawState();
  }

  /** Take a host.bmc event's fields (the BMC's view and what changed). */
  setBmc({ change, ...bmc }) {
    this.host.bmc = bmc;
    drawPower(this.#powerEl, this.host);
    if (change === 'mismatch') announce(`${this.host.name}: ${bmc.mismatch ? bmc.mismatch.message : 'the BMC and reachability agree again'}`);
  }

  /** Take the BMC view, idle countdown and wake schedule of host (read again). */
  setPower(host) {
    this.host.bmc = host.bmc;
    this.host.idle_poweroff = host.idle_poweroff;
    this.host.wake = host.wake;
    this.host.reservation = host.reservation;
    drawPower(this.#powerEl, this.host);
    this.#drawReservation();
  }

  /** Take the reservation granted on it (or null) and the ones queued for it (GET /reservations). */
  setReservations(granted, queued) {
    this.host.reservation = granted;
    this.#queued = queued;
    this.#drawReservation();
  }

  /** "Reserved by alice until 18:00: note" (GET /hosts' reservation), or nothing; the queue; the buttons. */
  #drawReservation() {
    const r = this.host.reservation;
    const key = JSON.stringify([r, this.#queued]);
    if (key === this.#resvKey) return;
    this.#resvKey = key;
    const { ctx, reserve } = this.#parts;
    replace(this.#queueEl, queueLines(this.#queued, ctx));
    replace(this.#resvButtons, reserve ? reserveButtons(this.host.name, r, ctx, reserve) : []);
    this.#resvEl.hidden = !r;
    this.el.dataset.reservedBy = r ? r.owner : '';
    replace(this.#resvEl, r ? [h('strong', {}, 'Reserved'), ` by ${r.owner} until ${absolute(r.until)}`,
      r.note ? ` — ${r.note}` : ''] : []);
  }

  draw() {
    const { host } = this;
    this.#state = new HostState();
    this.#powerEl = h('div', { class: 'power-block' });
    this.#resvEl = h('p', { class: 'host-reservation', hidden: true });
    this.#queueEl = h('div', { class: 'host-queue' });
    this.#resvButtons = h('div', { class: 'host-reserve' });
    this.#resvKey = null;
    this.#personas = new HostPersonas(host);
    const parts = this.#parts.board.partsFor(host);
    replace(this.el,
      h('article', { 'aria-labelledby': `host-${host.name}-name` },
        h('header', { class: 'host-head' },
          h('h2', { id: `host-${host.name}-name` }, host.name),
          h('span', { class: 'tag' }, host.role),
          this.#state.phase,
          this.#state.badge,
          host.console_state ? h('a', { class: 'console-link', href: `console.html#${host.name}` }, 'Console') : null),
        this.#state.el,
        this.#resvEl,
        this.#queueEl,
        this.#resvButtons,
        this.#powerEl,
        parts.controls,
        parts.panel,
        h('h3', {}, 'OS personas'),
        this.#personas.el,
        hostFacts(host),
        parts.history));
    this.#stateKey = null;
    this.#drawState();
    drawPower(this.#powerEl, host);
    this.#drawReservation();
  }

  #drawState() {
    const { host } = this;
    const st = host.state ?? { reachability: 'unknown' };
    const key = JSON.stringify(st);
    if (key === this.#stateKey) return;
    this.#stateKey = key;
    this.el.dataset.reachability = st.reachability;
    this.el.dataset.os = st.os ?? '';
    // What an action does to the machine now (powering on, booting, shutting down).
    this.el.dataset.phase = st.phase ?? st.reachability;
    this.el.dataset.heldBy = st.held_by ? (st.held_by.kind ? `${st.held_by.kind} ${st.held_by.id}` : 'other') : '';
    this.#state.draw(st, refusedKey(host, st, this.#parts));
    this.#personas.draw(host, st);
  }
}
