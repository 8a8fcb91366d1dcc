// hostreserve.mjs - reservations from the hosts page: the buttons on a
// host card ("Reserve…" for an operator or admin, "Release" for the owner of
// the reservation granted on it, "Break" for an admin, with a confirm) and
// the page's one dialog that asks which hosts, for how long and why, then
// POST /api/v1/reservations and says "granted" or "queued: position N,
// estimated start T".  A refusal (400 naming the field, 409) is shown in
// the dialog, naming the field.  The card lines themselves are hostcard.mjs's;
// the page reads GET /api/v1/reservations again on reservation.* events.

import { api } from './api.mjs';
import { announce, h, replace } from './dom.mjs';
import { errorAlert } from './format.mjs';
import { absolute } from './time.mjs';

const DURATIONS = [['30 min', 30], ['1 h', 60], ['2 h', 120], ['4 h', 240], ['until a time…', 0]];
const FIELD_NAMES = { hosts: 'Hosts', until: 'For how long', note: 'Note' };

/**
 * The buttons under a card's reservation line: r, the reservation granted
 * on host name (or null); ctx the app's; dialog, the page's ReserveDialog.
 * A viewer gets none.
 */
export function reserveButtons(name, r, ctx, dialog) {
  if (!ctx.canOperate()) return [];
  const msg = errorAlert();
  const out = [h('button', { type: 'button', class: 'reserve-open', onclick: () => dialog.open(name) }, 'Reserve…')];
  const mine = r && r.owner === ctx.session?.name;
  if (r && (mine || ctx.isAdmin())) {
    const label = mine ? 'Release' : 'Break';
    const button = h('button', { type: 'button', class: mine ? 'reserve-release' : 'reserve-break danger' }, label);
    button.addEventListener('click', async () => {
      if (!mine && !window.confirm(`Break ${r.owner}'s reservation ${r.id} of ${name}? It is audited.`)) return;
      button.disabled = true;
      msg.show(null);
      try {
        await api('DELETE', `reservations/${r.id}`);
        announce(`Reservation ${r.id} ${mine ? 'released' : 'broken'}`);
      } catch (err) {
        button.disabled = false;
        msg.show(err, mine ? 'Not released' : 'Not broken');
      }
    });
    out.push(button);
  }
  return [h('div', { class: 'reserve-buttons' }, out), msg.el];
}

/** "Queued: bob (position 1, estimated start 16:30)" lines for one host; its owner can withdraw one. */
export function queueLines(queued, ctx) {
  return queued.map((q) => {
    const line = h('p', { class: 'host-queued' }, h('strong', {}, 'Queued'),
      `: ${q.owner} (position ${q.position}, estimated start ${absolute(q.estimated_start)})`,
      q.note ? ` — ${q.note}` : '');
    if (!ctx.canOperate() || q.owner !== ctx.session?.name) return line;
    const msg = errorAlert();
    const button = h('button', { type: 'button', class: 'reserve-withdraw' }, 'Withdraw');
    button.addEventListener('click', async () => {
      button.disabled = true;
      msg.show(null);
      try {
        await api('DELETE', `reservations/${q.id}`);
        announce(`Reservation ${q.id} withdrawn`);
      } catch (err) {
        button.disabled = false;
        msg.show(err, 'Not withdrawn');
      }
    });
    return [line, h('div', { class: 'reserve-buttons' }, button), msg.el];
  });
}

/** The page's dialog: hosts (checkboxes), how long, a note; POST /reservations. */
export class ReserveDialog {
  #names = [];
  #hostsBox = h('fieldset', { class: 'reserve-hosts' });
  #duration = h('select', { id: 'reserve-duration', name: 'duration' },
    DURATIONS.map(([text, min]) => h('option', { value: String(min) }, text)));
  #until = h('input', { type: 'datetime-local', id: 'reserve-until', name: 'until', hidden: true });
  #note = h('input', { type: 'text', id: 'reserve-note', name: 'note', maxlength: 200, autocomplete: 'off' });
  #result = h('p', { class: 'reserve-result', role: 'status' });
  #error = errorAlert();
  #submit = h('button', { type: 'submit', class: 'primary' }, 'Reserve');

  constructor() {
    this.#duration.value = '60';
    this.#duration.addEventListener('change', () => { this.#until.hidden = this.#duration.value !== '0'; });
    const form = h('form', { class: 'reserve-form', novalidate: true },
      h('h2', { id: 'reserve-title' }, 'Reserve hosts'),
      this.#hostsBox,
      h('p', { class: 'field' }, h('label', { for: 'reserve-duration' }, 'For how long'), ' ', this.#duration, ' ', this.#until),
      h('p', { class: 'field' }, h('label', { for: 'reserve-note' }, 'Note'), ' ', this.#note),
      this.#error.el,
      this.#result,
      h('div', { class: 'buttons' },
        h('button', { type: 'button', onclick: () => this.el.close() }, 'Close'),
        this.#submit));
    form.addEventListener('submit', (e) => { e.preventDefault(); this.#send(); });
    this.el = h('dialog', { class: 'reserve-dialog', 'aria-labelledby': 'reserve-title' }, form);
  }

  /** The machines one can pick (the page's list). */
  setHosts(names) { this.#names = names; }

  /** Open with machine name picked. */
  open(name) {
    replace(this.#hostsBox, h('legend', {}, 'Hosts'), this.#names.map((n) => h('label', { class: 'check' },
      h('input', { type: 'checkbox', name: 'hosts', value: n, checked: n === name }), ` ${n}`)));
    this.#error.show(null);
    this.#result.textContent = '';
    this.#submit.disabled = false;
    this.el.showModal();
    this.#duration.focus();
  }

  async #send() {
    const hosts = [...this.#hostsBox.querySelectorAll('input:checked')].map((i) => i.value);
    const min = Number(this.#duration.value);
    let until;
    if (min > 0) until = new Date(Date.now() + min * 60_000);
    else until = this.#until.value ? new Date(this.#until.value) : null;
    const body = { hosts, until: until && !Number.isNaN(until.getTime()) ? until.toISOString().replace(/\.\d+Z$/, 'Z') : '', note: this.#note.value };
    this.#error.show(null);
    this.#result.textContent = '';
    for (const el of [this.#hostsBox, this.#duration, this.#until, this.#note]) el.removeAttribute('aria-invalid');
    this.#submit.disabled = true;
    try {
      const { reservation: r } = await api('POST', 'reservations', body);
      this.#result.textContent = r.state === 'granted'
        ? `Granted: reservation ${r.id} of ${r.hosts.join(', ')} until ${absolute(r.until)}.`
        : `Queued: position ${r.position}, estimated start ${absolute(r.estimated_start)} (reservation ${r.id}).`;
      announce(this.#result.textContent);
    } catch (err) {
      const label = FIELD_NAMES[err.field];
      const target = { hosts: this.#hostsBox, until: min > 0 ? this.#duration : this.#until, note: this.#note }[err.field];
      target?.setAttribute('aria-invalid', 'true');
      this.#error.show(err, label ? `Not reserved (${label})` : 'Not reserved');
    } finally {
      this.#submit.disabled = false;
    }
  }
}
