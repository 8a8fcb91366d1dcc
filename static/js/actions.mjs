// actions.mjs - power and boot on the hosts page: the buttons (operators and
// admins only), the action that runs with its steps and the exact commands,
// and each machine's recent actions.
//
// The action shown on a card is the newest one the page knows of for that
// machine.  It comes from three sources that may arrive in any order: the
// 202 reply of our own POST, the `action.state` / `action.step` events of
// the live stream, and GET /api/v1/actions/{id} (fetched once for every
// action the page first hears of, so that steps it missed are filled in).
// Steps are kept by id, so one seen twice is shown once, and a state never
// goes back (a late "running" after "succeeded" is ignored).

import { api } from './api.mjs';
import { announce, h, replace } from './dom.mjs';
import { absolute, parseTime, since } from './time.mjs';

const OS_NAMES = {
  freebsd: 'FreeBSD', ubuntu: 'Ubuntu', debian: 'Debian', openwrt: 'OpenWrt', linux: 'Linux',
  netbsd: 'NetBSD', openbsd: 'OpenBSD', dragonfly: 'DragonFly', fedora: 'Fedora', centos: 'CentOS',
  rhel: 'RHEL', arch: 'Arch', alpine: 'Alpine', windows: 'Windows',
};
const STATE_RANK = { queued: 0, running: 1, succeeded: 2, failed: 2, canceled: 2 };
const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);
// wakes: needs a way to switch the machine on (IPMI or Wake-on-LAN); without
// one, "cycle" would switch it off and leave it off.
const POWER = [
  { action: 'on', label: 'Power on', wakes: true },
  { action: 'off', label: 'Power off', confirm: true },
  { action: 'cycle', label: 'Cycle', confirm: true, wakes: true },
  { action: 'reset', label: 'Reset', confirm: true },
  { action: 'soft', label: 'Soft off' },
];
const HISTORY_LIMIT = 5;
const RECENT_MS = 10 * 60 * 1000;   // a page that loads shows an action that ended this recently

/** "FreeBSD" for freebsd. */
export function osLabel(os) {
  if (!os) return '?';
  return OS_NAMES[os] ?? os[0].toUpperCase() + os.slice(1);
}

/** "Boot FreeBSD", "Power off", "Cycle" - what an action does, as its button said. */
export function actionTitle(a) {
  if (a.kind === 'boot') {
    return `Boot ${osLabel(a.params?.os)}${a.params?.make_default ? ', make it the default' : ''}`;
  }
  if (a.kind === 'power') {
    const p = POWER.find((x) => x.action === a.params?.action);
    return p ? p.label : `Power ${a.params?.action ?? '?'}`;
  }
  return `Action ${a.id}`;
}

/** The OSes a machine can be booted into: personas with a GRUB entry, or GRUB's default. */
export function bootableOses(host) {
  if (!host.boot) return [];
  return Object.keys(host.os ?? {}).filter((os) =>
    Object.hasOwn(host.boot.entries ?? {}, os) || host.boot.default === os);
}

/** "12 s", "2 min 05 s", "1 h 02 min": an elapsed time, to the second while it is short. */
export function elapsed(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(min / 60)} h ${String(min % 60).padStart(2, '0')} min`;
}

/** "+3.4 s": when a step happened, counted from the action's start. */
function offset(ms) {
  if (!Number.isFinite(ms)) return '';
  const s = Math.max(0, ms) / 1000;
  return s < 100 ? `+${s.toFixed(1)} s` : `+${elapsed(ms)}`;
}

function isoMs(ms) {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', ' UTC');
}

/** A new model from an action as the API gives it (steps optional). */
function model(a) {
  const { steps, ...fields } = a;
  const m = { ...fields, steps: new Map() };
  for (const s of steps ?? []) m.steps.set(s.id, s);
  return m;
}

/** Merge what the API or an event says about action a into m (same id). */
function mergeInto(m, a) {
  const { steps, ...fields } = a;
  const newer = (STATE_RANK[fields.state] ?? -1) >= (STATE_RANK[m.state] ?? -1);
  for (const [k, v] of Object.entries(fields)) {
    if (k === 'state') {
      if (newer && !TERMINAL.has(m.state)) m.state = v;
    } else if (v !== null && v !== undefined && (newer || m[k] === undefined || m[k] === null)) {
      m[k] = v;
    }
  }
  for (const s of steps ?? []) if (!m.steps.has(s.id)) m.steps.set(s.id, s);
}

/** A step as the action.step event gives it -> as GET /api/v1/actions/{id} does. */
function eventStep(d) {
  return { id: d.step, at: d.at, at_ms: d.at_ms, what: d.what, command: d.command, exit_status: d.exit_status, output: d.output };
}

function stateBadge(state) {
  return h('span', { class: `act-state act-${state}` }, state);
}

/** "took 1.2 s": how long a step took (until the next step, the last until the end). */
function took(ms) {
  if (!Number.isFinite(ms)) return '';
  return ms < 100000 ? `took ${(Math.max(0, ms) / 1000).toFixed(1)} s` : `took ${elapsed(ms)}`;
}

/** Each step's duration in ms by id: the API's duration_ms, else until the
 * next step (the last until endMs; unknown while the action runs). */
function stepDurations(steps, endMs) {
  const d = new Map();
  steps.forEach((s, i) => {
    const next = i + 1 < steps.length ? steps[i + 1].at_ms : endMs;
    if (Number.isFinite(s.duration_ms)) d.set(s.id, s.duration_ms);
    else if (Number.isFinite(next) && Number.isFinite(s.at_ms)) d.set(s.id, next - s.at_ms);
  });
  return d;
}

/** One step: when, what, how long it took, the exact command and its result. */
function stepItem(s, startMs, durMs) {
  const out = s.output ?? '';
  const short = out.length <= 160 && out.split('\n').length <= 2;
  const bad = s.exit_status !== null && s.exit_status !== undefined && s.exit_status !== 0;
  // a failed or slow action's last console lines (why it failed: a hung driver's line): open, as a terminal shows them
  const con = /^last console lines /.test(s.what ?? '');
  return h('li', { class: ['step', bad && 'step-bad'], dataset: { step: String(s.id) } },
    h('div', { class: 'step-head' },
      h('span', { class: 'step-at', title: Number.isFinite(s.at_ms) ? isoMs(s.at_ms) : absolute(s.at) },
        offset(s.at_ms - startMs)),
      h('span', { class: 'step-what' }, s.what),
      h('span', { class: 'step-took' }, took(durMs)),
      s.exit_status !== null && s.exit_status !== undefined
        ? h('span', { class: ['exit', bad ? 'exit-bad' : 'exit-ok'] }, `exit ${s.exit_status}`)
        : null),
    s.command ? h('pre', { class: 'cmd step-cmd' }, h('code', {}, s.command)) : null,
    out && short ? h('pre', { class: 'step-out' }, h('samp', {}, out)) : null,
    out && !short
      ? h('details', { class: 'step-more', open: con }, h('summary', {}, `${con ? 'console' : 'output'} (${out.split('\n').length} lines)`),
        h('pre', { class: ['step-out', con && 'step-console'] }, h('samp', {}, out)))
      : null);
}

/** The start of an action in ms (started_ms; before testbedd kept ms, its first step when that is earlier). */
function startOf(m) {
  if (Number.isFinite(m.started_ms)) return m.started_ms;
  let t = parseTime(m.started_at) ?? parseTime(m.created_at);
  for (const s of m.steps.values()) if (Number.isFinite(s.at_ms) && (t === null || s.at_ms < t)) t = s.at_ms;
  return t;
}

/** The end of an action in ms (finished_ms; before testbedd kept ms, its last step when that is later). */
function endOf(m) {
  if (Number.isFinite(m.finished_ms)) return m.finished_ms;
  let t = parseTime(m.finished_at);
  if (t === null) return null;
  for (const s of m.steps.values()) if (Number.isFinite(s.at_ms) && s.at_ms > t) t = s.at_ms;
  return t;
}

function sortedSteps(m) {
  return [...m.steps.values()].sort((a, b) => a.id - b.id);
}

/** The whole page's power and boot state: one slot per machine. */
export class ActionBoard {
  #ctx;
  #slots = new Map();
  #fetching = new Set();
  #ticker;
  #dialog;
  #generation = 0;

  constructor(ctx) {
    this.#ctx = ctx;
    this.#dialog = confirmDialog();
    this.#ticker = setInterval(() => this.#tick(), 1000);
  }

  /** The dialog element: the page must put it in the document. */
  get dialogEl() { return this.#dialog.el; }

  destroy() {
    this.#generation += 1;
    clearInterval(this.#ticker);
  }

  #canOperate() {
    const role = this.#ctx.session?.role;
    return role === 'operator' || role === 'admin';
  }

  #slot(name) {
    let s = this.#slots.get(name);
    if (!s) {
      s = {
        name, host: null, action: null, dismissed: null, panel: null,
        controlsEl: h('div', { class: 'controls-slot' }),
        panelEl: h('div', { class: 'action-slot' }),
        historyEl: null, history: null,
      };
      this.#slots.set(name, s);
    }
    return s;
  }

  /**
   * The elements of machine host's card: {controls, panel, history}.  They
   * live as long as the page does, so a card drawn again gets them back.
   */
  partsFor(host) {
    const s = this.#slot(host.name);
    s.host = host;
    this.#drawControls(s);
    if (!s.historyEl) s.historyEl = this.#historyView(s);
    this.#drawPanel(s);
    return { controls: s.controlsEl, panel: s.panelEl, history: s.historyEl };
  }

  /** The host's state changed (the confirmation text and busy hints use it). */
  hostChanged(host) {
    const s = this.#slots.get(host.name);
    if (s) s.host = host;
  }

  /**
   * For a page that just loaded its list: each machine's newest action when
   * it still runs or ended in the last few minutes.
   */
  async seed() {
    const mine = this.#generation;
    let reply;
    try {
      reply = await api('GET', 'actions?limit=100');
    } catch (err) {
      if (err.status !== 401) console.warn('testbedd: actions:', err.message);
      return;
    }
    if (mine !== this.#generation) return;
    const newest = new Map();
    for (const a of reply.actions ?? []) {
      if (!newest.has(a.host) || newest.get(a.host).id < a.id) newest.set(a.host, a);
    }
    for (const a of newest.values()) {
      const ended = parseTime(a.finished_at);
      if (TERMINAL.has(a.state) && (ended === null || Date.now() - ended > RECENT_MS)) continue;
      if (this.#slots.has(a.host)) this.#learn(a.host, a, true);
    }
  }

  /** An event from the live stream: action.state or action.step. */
  onEvent(ev) {
    if (!ev.host || !this.#slots.has(ev.host)) return;
    if (ev.type === 'action.state') {
      this.#learn(ev.host, ev.data, true);
      this.#refreshHistory(this.#slots.get(ev.host));
    } else if (ev.type === 'action.step') {
      const d = ev.data;
      this.#learn(ev.host, { id: d.action, host: ev.host, state: 'running', steps: [eventStep(d)] }, true);
    }
  }

  /**
   * What the page learned about action a of machine name; fetch: ask for the
   * whole action when it is new to the page.
   */
  #learn(name, a, fetch) {
    const s = this.#slot(name);
    const cur = s.action;
    if (cur && a.id < cur.id) return;
    if (s.dismissed !== null && a.id <= s.dismissed) return;
    let fresh = false;
    if (!cur || a.id > cur.id) {
      s.action = model(a);
      fresh = true;
      // A new action: a "busy" message under the buttons no longer applies.
      if (s.msg?.dataset.busy) s.msg.hidden = true;
    } else {
      const was = cur.state;
      mergeInto(cur, a);
      if (!TERMINAL.has(was) && TERMINAL.has(cur.state)) this.#ended(s);
    }
    this.#drawPanel(s);
    if (fresh && fetch) this.#fetch(s, a.id);
  }

  async #fetch(s, id) {
    const key = `${s.name}/${id}`;
    if (this.#fetching.has(key)) return;
    this.#fetching.add(key);
    const mine = this.#generation;
    try {
      const reply = await api('GET', `actions/${id}`);
      if (mine === this.#generation) this.#learn(s.name, reply.action, false);
    } catch (err) {
      if (err.status !== 401) console.warn(`testbedd: action ${id}:`, err.message);
    } finally {
      this.#fetching.delete(key);
    }
  }

  #ended(s) {
    const a = s.action;
    if (s.msg && s.msg.dataset.busy) s.msg.hidden = true;
    const how = a.state === 'failed' && a.error ? `failed: ${a.error.message}` : a.state;
    announce(`${s.name}: ${actionTitle(a)} ${how}`);
  }

  // ---------------------------------------------------------------- buttons

  #drawControls(s) {
    const host = s.host;
    if (!this.#canOperate()) {
      replace(s.controlsEl);
      return;
    }
    const name = host.name;
    s.msg = h('p', { class: 'alert action-msg', role: 'alert', hidden: true });
    const buttons = [];
    const canWake = (host.power ?? []).length > 0;
    const power = POWER.filter((p) => canWake || !p.wakes).map((p) => {
      const b = h('button', { type: 'button', class: ['power', p.confirm && 'danger-quiet'], dataset: { power: p.action } }, p.label);
      b.addEventListener('click', async () => {
        if (p.confirm && !(await this.#dialog.ask(confirmText(s.host, p.action)))) return;
        this.#start(s, buttons, 'power', { action: p.action }, b);
      });
      buttons.push(b);
      return b;
    });
    const oses = bootableOses(host);
    let boot = null;
    if (oses.length) {
      const makeDefault = h('input', { type: 'checkbox', id: `make-default-${name}`, class: 'make-default' });
      boot = h('div', { class: 'control-row', role: 'group', 'aria-label': `Boot ${name} into` },
        h('span', { class: 'control-label', 'aria-hidden': 'true' }, 'Boot'),
        h('div', { class: 'control-buttons' },
          oses.map((os) => {
            const b = h('button', { type: 'button', class: 'boot', dataset: { boot: os } }, `Boot ${osLabel(os)}`);
            b.addEventListener('click', () => {
              const body = { os, make_default: makeDefault.checked };
              this.#start(s, buttons, 'boot', body, b, () => { makeDefault.checked = false; });
            });
            buttons.push(b);
            return b;
          }),
          h('label', { class: 'check', for: makeDefault.id, title: 'grub-set-default: GRUB boots it from then on, not just once' },
            makeDefault, ' make it the default')));
    }
    replace(s.controlsEl,
      h('div', { class: 'controls', role: 'group', 'aria-label': `Power and boot ${name}` },
        h('div', { class: 'control-row', role: 'group', 'aria-label': `Power ${name}` },
          h('span', { class: 'control-label', 'aria-hidden': 'true' }, 'Power'),
          h('div', { class: 'control-buttons' }, power,
            canWake ? null : h('span', { class: 'help no-wake' }, 'no IPMI or Wake-on-LAN: cannot be switched on from here'))),
        boot,
        s.msg));
  }

  async #start(s, buttons, what, body, button, done) {
    const name = s.name;
    s.msg.hidden = true;
    delete s.msg.dataset.busy;
    for (const b of buttons) b.disabled = true;
    button.setAttribute('aria-busy', 'true');
    try {
      const reply = await api('POST', `hosts/${encodeURIComponent(name)}/${what}`, body);
      if (done) done();
      s.dismissed = null;
      this.#learn(name, reply.action, false);
      announce(`${name}: ${actionTitle(reply.action)} started`);
    } catch (err) {
      if (err.status === 401) return;
      let text;
      if (err.code === 'csrf_required') {
        text = 'This tab has no CSRF token for your session: log out and log in again to make changes.';
      } else if (err.status === 409) {
        text = `Not started: ${err.message}`;
        s.msg.dataset.busy = 'yes';
      } else {
        text = `Not started: ${err.message}`;
      }
      s.msg.textContent = text;
      s.msg.hidden = false;
    } finally {
      for (const b of buttons) b.disabled = false;
      button.removeAttribute('aria-busy');
    }
  }

  // ---------------------------------------------------------------- the running action

  #drawPanel(s) {
    const m = s.action;
    if (!m || (s.dismissed !== null && m.id <= s.dismissed)) {
      s.panel = null;
      replace(s.panelEl);
      return;
    }
    if (!s.panel || s.panel.id !== m.id) s.panel = this.#newPanel(s, m);
    this.#updatePanel(s, m);
  }

  #newPanel(s, m) {
    const p = { id: m.id };
    p.title = h('strong', { class: 'act-title' });
    p.state = h('span', { class: 'act-state' });
    p.elapsed = h('span', { class: 'act-elapsed' });
    p.meta = h('p', { class: 'act-meta muted' });
    p.error = h('p', { class: 'act-error', hidden: true });
    p.steps = h('ol', { class: 'steps', 'aria-label': `Steps of action ${m.id}` });
    p.none = h('p', { class: 'muted steps-none' }, 'No step yet.');
    p.cancel = null;
    p.buttons = h('div', { class: 'act-buttons' });
    if (this.#canOperate()) {
      p.cancel = h('button', { type: 'button', class: 'cancel' }, 'Cancel');
      p.cancel.addEventListener('click', () => this.#cancel(s, p));
    }
    p.dismiss = h('button', { type: 'button', class: 'dismiss', title: 'Hide this action (Recent actions keeps it)' }, 'Hide');
    p.dismiss.addEventListener('click', () => {
      s.dismissed = p.id;
      this.#drawPanel(s);
    });
    p.el = h('section', { class: 'action', 'aria-label': `Action ${m.id} on ${s.name}`, dataset: { action: String(m.id) } },
      h('div', { class: 'act-head' },
        p.title, p.state, p.elapsed, p.buttons),
      p.meta, p.error, p.none, p.steps);
    replace(s.panelEl, p.el);
    return p;
  }

  #updatePanel(s, m) {
    const p = s.panel;
    const terminal = TERMINAL.has(m.state);
    p.el.dataset.state = m.state ?? '';
    p.title.textContent = m.kind ? actionTitle(m) : `Action ${m.id}`;
    p.state.className = `act-state act-${m.state}`;
    p.state.textContent = m.state ?? '';
    const start = startOf(m);
    const end = endOf(m);
    p.elapsed.dataset.from = start ?? '';
    if (terminal) {
      delete p.elapsed.dataset.live;
      p.elapsed.textContent = start !== null && end !== null ? `in ${elapsed(Math.max(end - start, 0))}` : '';
      p.elapsed.title = end !== null ? `ended ${absolute(m.finished_at)}` : '';
    } else {
      p.elapsed.dataset.live = 'yes';
      p.elapsed.textContent = start !== null ? elapsed(Date.now() - start) : '';
      p.elapsed.title = start !== null ? `started ${isoMs(start)}` : '';
    }
    p.meta.textContent = [
      `action ${m.id}`,
      m.actor ? `by ${m.actor}` : null,
      m.created_at ? `asked ${absolute(m.created_at)}` : null,
    ].filter(Boolean).join(' · ');
    if (m.error && m.state !== 'succeeded') {
      replace(p.error, h('code', { class: 'code' }, m.error.code), ' ', m.error.message);
      p.error.hidden = false;
    } else {
      p.error.hidden = true;
    }
    if (p.cancel && !terminal && !p.cancel.isConnected) replace(p.buttons, p.cancel);
    if (terminal && !p.dismiss.isConnected) {
      const focused = p.cancel && document.activeElement === p.cancel;
      replace(p.buttons, p.dismiss);
      if (focused) p.dismiss.focus();
    }
    // Steps: append what is new, in id order; a step never changes but
    // its duration, known when the next step (or the end) comes.
    const shown = new Set([...p.steps.children].map((li) => Number(li.dataset.step)));
    const steps = sortedSteps(m);
    const durs = stepDurations(steps, terminal ? end : null);
    for (const st of steps) {
      if (shown.has(st.id)) continue;
      const li = stepItem(st, start ?? st.at_ms, durs.get(st.id));
      const after = [...p.steps.children].find((el) => Number(el.dataset.step) > st.id);
      p.steps.insertBefore(li, after ?? null);
    }
    for (const li of p.steps.children) {
      const el = li.querySelector('.step-took');
      if (el) el.textContent = took(durs.get(Number(li.dataset.step)));
    }
    p.none.hidden = m.steps.size > 0 || terminal;
  }

  async #cancel(s, p) {
    p.cancel.disabled = true;
    try {
      const reply = await api('POST', `actions/${p.id}/cancel`);
      this.#learn(s.name, reply.action, false);
      announce(`${s.name}: cancel requested`);
    } catch (err) {
      if (err.status === 401) return;
      replace(p.error, `Not canceled: ${err.message}`);
      p.error.hidden = false;
    } finally {
      p.cancel.disabled = false;
    }
  }

  #tick() {
    const now = Date.now();
    for (const s of this.#slots.values()) {
      const el = s.panel?.elapsed;
      if (el?.dataset.live && el.dataset.from) el.textContent = elapsed(now - Number(el.dataset.from));
    }
  }

  // ---------------------------------------------------------------- recent actions

  #historyView(s) {
    const list = h('ol', { class: 'history-list', 'aria-label': `Recent actions on ${s.name}` });
    const status = h('p', { class: 'muted history-status' }, 'Loading…');
    const el = h('details', { class: 'history' },
      h('summary', {}, 'Recent actions'),
      status, list);
    s.history = { el, list, status, cache: new Map(), open: new Set(), asked: 0 };
    el.addEventListener('toggle', () => { if (el.open) this.#refreshHistory(s); });
    return el;
  }

  async #refreshHistory(s) {
    const hv = s.history;
    if (!hv || !hv.el.open) return;
    const mine = this.#generation;
    const ask = ++hv.asked;     // only the answer to the last question is drawn
    try {
      const reply = await api('GET', `actions?host=${encodeURIComponent(s.name)}&limit=${HISTORY_LIMIT}`);
      if (mine !== this.#generation || ask !== hv.asked) return;
      this.#drawHistory(s, reply.actions ?? []);
    } catch (err) {
      if (err.status === 401) return;
      hv.status.textContent = `Could not load the actions: ${err.message}`;
      hv.status.hidden = false;
    }
  }

  #drawHistory(s, actions) {
    const hv = s.history;
    hv.status.hidden = actions.length > 0;
    hv.status.textContent = actions.length ? '' : 'No actions yet.';
    replace(hv.list, actions.map((a) => {
      const start = Number.isFinite(a.started_ms) ? a.started_ms : parseTime(a.started_at);
      const end = Number.isFinite(a.finished_ms) ? a.finished_ms : parseTime(a.finished_at);
      const body = h('div', { class: 'past-body' });
      const d = h('details', { class: 'past', dataset: { action: String(a.id) } },
        h('summary', {},
          h('span', { class: 'past-title' }, actionTitle(a)), ' ',
          stateBadge(a.state), ' ',
          h('span', { class: 'muted past-when' },
            [start !== null && end !== null ? `in ${elapsed(end - start)}` : null,
              a.actor ? `by ${a.actor}` : null,
              `${since(a.created_at) ?? '?'} ago`].filter(Boolean).join(' · '))),
        body);
      d.title = `action ${a.id}, asked ${absolute(a.created_at)}`;
      const fill = async () => {
        let full = hv.cache.get(a.id);
        if (!full || !TERMINAL.has(full.state)) {
          replace(body, h('p', { class: 'muted' }, 'Loading the steps…'));
          try {
            full = (await api('GET', `actions/${a.id}`)).action;
            hv.cache.set(a.id, full);
          } catch (err) {
            replace(body, h('p', { class: 'alert' }, `Could not load the steps: ${err.message}`));
            return;
          }
        }
        const m = model(full);
        const st = startOf(m);
        const durs = stepDurations(sortedSteps(m), endOf(m));
        replace(body,
          full.error ? h('p', { class: 'act-error' }, h('code', { class: 'code' }, full.error.code), ' ', full.error.message) : null,
          m.steps.size
            ? h('ol', { class: 'steps', 'aria-label': `Steps of action ${a.id}` }, sortedSteps(m).map((x) => stepItem(x, st ?? x.at_ms, durs.get(x.id))))
            : h('p', { class: 'muted' }, 'No steps.'));
      };
      d.addEventListener('toggle', () => {
        if (d.open) { hv.open.add(a.id); fill(); } else hv.open.delete(a.id);
      });
      if (hv.open.has(a.id)) d.open = true;   // fills itself on its toggle event
      return h('li', {}, d);
    }));
  }
}

/** What the confirmation says for power action op on host. */
function confirmText(host, op) {
  const bmc = (host.power ?? []).some((p) => p.driver === 'ipmi');
  const wol = (host.power ?? []).some((p) => p.driver === 'wol');
  const st = host.state ?? {};
  const now = st.reachability === 'up' ? `${host.name} is up${st.os ? ` as ${st.os}` : ''}.`
    : st.reachability === 'down' ? `${host.name} does not answer now.` : '';
  const stops = 'Whatever runs on it stops.';
  if (op === 'off') {
    return {
      title: `Power off ${host.name}?`,
      confirm: 'Power off',
      lines: [now,
        bmc ? 'testbedd switches it off through its BMC (IPMI chassis power off), without a shutdown.'
          : 'testbedd asks its OS to shut down (systemctl poweroff on Linux, shutdown -p now on FreeBSD, poweroff where those are missing) and waits until it no longer answers.',
        stops,
        !bmc && !wol ? `Nothing here can switch it on again: the inventory gives ${host.name} no IPMI and no Wake-on-LAN.` : null],
    };
  }
  if (op === 'cycle') {
    return {
      title: `Power-cycle ${host.name}?`,
      confirm: 'Cycle',
      lines: [now,
        bmc ? 'Off and on again through its BMC (IPMI chassis power cycle), without a shutdown.'
          : 'Its OS shuts down, then Wake-on-LAN switches it on again.',
        stops],
    };
  }
  return {
    title: `Reset ${host.name}?`,
    confirm: 'Reset',
    lines: [now,
      bmc ? 'A hard reset through its BMC (IPMI chassis power reset), without a shutdown.'
        : `${host.name} has no BMC: its OS reboots (systemctl reboot, shutdown -r now).`,
      stops],
  };
}

/** A modal that asks before a power action that cuts a machine off. */
function confirmDialog() {
  const title = h('h2', { id: 'confirm-title' });
  const body = h('div', { id: 'confirm-body' });
  const confirm = h('button', { type: 'submit', value: 'yes', class: 'danger' });
  const cancel = h('button', { type: 'submit', value: 'cancel', formnovalidate: true }, 'Cancel');
  const el = h('dialog', { class: 'confirm-dialog', 'aria-labelledby': 'confirm-title', 'aria-describedby': 'confirm-body' },
    h('form', { method: 'dialog' },
      title,
      body,
      h('div', { class: 'buttons' }, cancel, confirm)));
  return {
    el,
    ask(text) {
      title.textContent = text.title;
      replace(body, text.lines.filter(Boolean).map((l) => h('p', {}, l)));
      confirm.textContent = text.confirm;
      el.returnValue = '';
      el.showModal();
      cancel.focus();
      return new Promise((resolve) => {
        el.addEventListener('close', () => resolve(el.returnValue === 'yes'), { once: true });
      });
    },
  };
}
