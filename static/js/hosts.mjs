// hosts.mjs - every machine with its OS personas and live state.
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
// since "checked 12 s ago" moves without events).

import { ActionBoard } from './actions.mjs';
import { api } from './api.mjs';
import { drawPower, tickPower } from './hostpower.mjs';
import { announce, h, replace } from './dom.mjs';
import { absolute, since } from './time.mjs';

const REACH_TEXT = { up: 'up', down: 'down', unknown: 'unknown' };
const PHASE_TEXT = { powering_on: 'powering on…', booting: 'booting…', shutting_down: 'shutting down…' };

export function renderHosts(main, ctx) {
  const cards = new Map();      // name -> {host, el, stateKey}
  let loaded = false;
  let queue = [];
  let generation = 0;
  const status = h('p', { class: 'muted', role: 'status' }, 'Loading the machines…');
  const summary = h('p', { class: 'summary' });
  const list = h('ul', { class: 'hosts', 'aria-label': 'Machines' });
  const dialog = trustDialog();
  const board = new ActionBoard(ctx);

  replace(main,
    h('div', { class: 'page-head' },
      h('h1', {}, 'Hosts'),
      summary),
    status,
    list,
    dialog.el,
    board.dialogEl);

  async function load() {
    const mine = ++generation;
    loaded = false;
    try {
      const reply = await api('GET', 'hosts');
      if (mine !== generation) return;
      cards.clear();
      replace(list, reply.hosts.map((host) => {
        const card = { host, el: h('li', { class: 'host', id: `host-${host.name}`, dataset: { host: host.name } }) };
        cards.set(host.name, card);
        drawCard(card);
        return card.el;
      }));
      status.hidden = true;
      if (reply.hosts.length === 0) {
        status.textContent = 'The inventory has no machines.';
        status.hidden = false;
      }
      loaded = true;
      const pending = queue;
      queue = [];
      for (const ev of pending) apply(ev);
      drawSummary();
      board.seed();
    } catch (err) {
      if (mine !== generation) return;
      if (err.status === 401) return;   // the app shows the login page
      status.textContent = `Could not load the machines: ${err.message}`;
      status.className = 'alert';
      status.hidden = false;
    }
  }

  function apply(ev) {
    if (ev.type === 'action.state' || ev.type === 'action.step') {
      board.onEvent(ev);
      if (ev.type === 'action.state') reread(ev.host);
      return;
    }
    const card = cards.get(ev.host);
    if (!card) {
      // A machine we do not know: the inventory was reloaded.
      load();
      return;
    }
    if (ev.type === 'host.bmc') {
      const { change, ...bmc } = ev.data;
      card.host.bmc = bmc;
      drawPower(card.powerEl, card.host);
      if (change === 'mismatch') announce(`${card.host.name}: ${bmc.mismatch ? bmc.mismatch.message : 'the BMC and reachability agree again'}`);
      return;
    }
    const before = card.host.state;
    card.host.state = ev.data;
    board.hostChanged(card.host);
    drawState(card);
    reread(card.host.name);
    drawSummary();
    if (before?.reachability !== ev.data.reachability || before?.os !== ev.data.os)
      announce(`${card.host.name} is now ${stateSentence(ev.data)}`);
  }

  function onEvent(e) {
    if (loaded) apply(e.detail);
    else queue.push(e.detail);
  }
  function onReset() {
    queue = [];
    load();
  }

  // The BMC view and the idle countdown of one machine (or all), read again.
  const rereads = new Map();
  function reread(name) {
    if (!cards.has(name) || rereads.has(name)) return;
    rereads.set(name, setTimeout(async () => {
      rereads.delete(name);
      try {
        const { host } = await api('GET', `hosts/${encodeURIComponent(name)}`);
        const card = cards.get(name);
        if (card) updatePower(card, host);
      } catch { /* the next event or poll tries again */ }
    }, 300));
  }
  function updatePower(card, host) {
    card.host.bmc = host.bmc;
    card.host.idle_poweroff = host.idle_poweroff;
    card.host.wake = host.wake;
    drawPower(card.powerEl, card.host);
  }
  async function pollPower() {
    if (!loaded) return;
    try {
      const reply = await api('GET', 'hosts');
      for (const host of reply.hosts) {
        const card = cards.get(host.name);
        if (card) updatePower(card, host);
      }
    } catch { /* next time */ }
  }

  function drawSummary() {
    const counts = { up: 0, down: 0, unknown: 0 };
    for (const { host } of cards.values()) counts[host.state?.reachability ?? 'unknown'] += 1;
    const parts = [`${cards.size} machine${cards.size === 1 ? '' : 's'}`, `${counts.up} up`, `${counts.down} down`];
    if (counts.unknown) parts.push(`${counts.unknown} not probed yet`);
    summary.textContent = parts.join(' · ');
  }

  function drawCard(card) {
    const { host } = card;
    card.stateEl = h('div', { class: 'state-block' });
    card.powerEl = h('div', { class: 'power-block' });
    card.personasEl = h('ul', { class: 'personas', 'aria-label': `OS personas of ${host.name}` });
    const parts = board.partsFor(host);
    replace(card.el,
      h('article', { 'aria-labelledby': `host-${host.name}-name` },
        h('header', { class: 'host-head' },
          h('h2', { id: `host-${host.name}-name` }, host.name),
          h('span', { class: 'tag' }, host.role),
          card.phase = h('span', { class: 'phase', hidden: true }),
          card.badge = h('span', { class: 'badge' })),
        card.stateEl,
        card.powerEl,
        parts.controls,
        parts.panel,
        h('h3', {}, 'OS personas'),
        card.personasEl,
        facts(host),
        parts.history));
    card.stateKey = null;
    drawState(card);
    drawPower(card.powerEl, host);
  }

  function drawState(card) {
    const { host } = card;
    const st = host.state ?? { reachability: 'unknown' };
    const key = JSON.stringify(st);
    if (key === card.stateKey) return;
    card.stateKey = key;
    card.el.dataset.reachability = st.reachability;
    card.el.dataset.os = st.os ?? '';
    card.badge.textContent = REACH_TEXT[st.reachability] ?? st.reachability;
    card.badge.className = `badge badge-${st.reachability}`;
    // What an action does to the machine now (powering on, booting, shutting down).
    const phase = PHASE_TEXT[st.phase];
    card.el.dataset.phase = st.phase ?? st.reachability;
    card.phase.hidden = !phase;
    card.phase.textContent = phase ?? '';

    // checked_at is not shown: testbedd publishes a host.state event when
    // reachability, OS or error change, not after every probe, so it would
    // only say when the page last heard - in a tooltip, with the absolute times.
    const line = h('p', {
      class: 'state',
      title: [st.since && `since ${absolute(st.since)}`, st.checked_at && `checked ${absolute(st.checked_at)}`]
        .filter(Boolean).join(', ') || null,
    }, stateLine(st));
    // A refused host key has its own box below; its error would only repeat it.
    const keyError = st.last_error?.code === 'host_key_mismatch' && st.presented_host_key;
    const error = st.last_error && !keyError
      ? h('p', { class: 'last-error' },
        h('span', { class: 'visually-hidden' }, 'Last error: '),
        h('code', { class: 'code' }, st.last_error.code), ' ', st.last_error.message)
      : null;
    replace(card.stateEl, line, error, refusedKey(host, st));

    replace(card.personasEl, Object.entries(host.os ?? {}).map(([name, p]) => {
      const answers = st.reachability === 'up' && st.os === name;
      return h('li', { class: ['persona', answers && 'answering'], dataset: { os: name } },
        h('div', { class: 'persona-head' },
          h('span', { class: 'os-name' }, name),
          answers ? h('span', { class: 'answers' }, 'answers') : null),
        h('div', { class: 'persona-addr' }, h('code', {}, `${p.user}@${p.address}:${p.port}`)),
        h('div', { class: 'persona-key' },
          h('span', { class: 'muted' }, 'host key '),
          p.host_key ? h('code', { class: 'fp' }, p.host_key) : h('span', { class: 'muted' }, 'none pinned')));
    }));
  }

  function refusedKey(host, st) {
    const pk = st.presented_host_key;
    if (!pk) return null;
    const pinned = host.os?.[pk.os]?.host_key;
    const box = h('div', { class: 'refused-key', role: 'group', 'aria-label': `Refused host key of ${host.name}` },
      h('p', {}, h('code', { class: 'code' }, 'host_key_mismatch'), ' ',
        h('strong', {}, pinned
          ? `${pk.os} presented a host key that differs from the pinned one:`
          : `${pk.os} presented a host key; none is pinned yet:`)),
      h('p', {}, h('code', { class: 'fp presented' }, pk.fingerprint)),
      pinned ? h('p', { class: 'help' }, 'pinned: ', h('code', { class: 'fp' }, pinned)) : null);
    if (ctx.isAdmin()) {
      const msg = h('p', { class: 'alert', role: 'alert', hidden: true });
      const button = h('button', { type: 'button', class: 'danger' }, 'Trust this key');
      button.addEventListener('click', async () => {
        if (!(await dialog.ask(host.name, pk))) return;
        button.disabled = true;
        msg.hidden = true;
        try {
          const reply = await api('POST', `hosts/${encodeURIComponent(host.name)}/trust`,
            { os: pk.os, fingerprint: pk.fingerprint });
          const card = cards.get(host.name);
          if (card) {
            card.host = reply.host;
            drawCard(card);
            drawSummary();
          }
          announce(`${host.name}: the ${pk.os} host key is trusted now`);
        } catch (err) {
          button.disabled = false;
          msg.textContent = err.code === 'csrf_required'
            ? 'This tab has no CSRF token for your session: log out and log in again to make changes.'
            : `Not trusted: ${err.message}`;
          msg.hidden = false;
        }
      });
      box.append(h('p', { class: 'help' },
        'Compare it with the machine\'s own key before trusting it; on its console:'),
      h('pre', { class: 'cmd' }, h('code', {}, 'ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub')),
      button, msg);
    } else {
      box.append(h('p', { class: 'help' }, 'An admin can accept it after comparing it with the machine\'s own key.'));
    }
    return box;
  }

  const onTick = () => {
    for (const el of main.querySelectorAll('time[data-rel]')) el.textContent = since(el.dateTime) ?? '';
  };
  const ticker = setInterval(onTick, 10_000);
  const countdown = setInterval(() => tickPower(main), 1000);
  const poller = setInterval(pollPower, 15_000);

  const types = ['host.state', 'host.bmc', 'action.state', 'action.step'];
  for (const t of types) ctx.live?.addEventListener(t, onEvent);
  ctx.live?.addEventListener('reset', onReset);
  // Open the stream first, so nothing that changes while the list loads is missed.
  (ctx.live ? ctx.live.whenOpen(2000) : Promise.resolve()).then(() => { if (generation === 0) load(); });

  return () => {
    generation += 1;
    clearInterval(ticker);
    clearInterval(countdown);
    clearInterval(poller);
    for (const t of rereads.values()) clearTimeout(t);
    board.destroy();
    for (const t of types) ctx.live?.removeEventListener(t, onEvent);
    ctx.live?.removeEventListener('reset', onReset);
  };
}

function relTime(value) {
  return h('time', { datetime: value, title: absolute(value), dataset: { rel: '' } }, since(value) ?? '');
}

function stateLine(st) {
  if (st.reachability === 'up') {
    return [h('strong', {}, 'up'), st.os ? [' as ', h('strong', {}, st.os)] : null,
      st.since ? [' for ', relTime(st.since)] : null];
  }
  if (st.reachability === 'down') return [h('strong', {}, 'down'), st.since ? [' for ', relTime(st.since)] : null];
  return 'not probed yet';
}

function stateSentence(st) {
  if (st.reachability === 'up') return st.os ? `up as ${st.os}` : 'up';
  return st.reachability === 'down' ? 'down' : 'unknown';
}

function facts(host) {
  const rows = [];
  const add = (term, ...value) => rows.push(h('dt', {}, term), h('dd', {}, ...value));
  if (host.boot) {
    add('boot', h('code', {}, host.boot.loader), ', default ', h('strong', {}, host.boot.default), ': ',
      joined(Object.entries(host.boot.entries ?? {}).map(([os, entry]) =>
        [os, ' → ', h('code', {}, entry)])));
  }
  if (host.power?.length) add('power', joined(host.power.map(powerText), '; '));
  if (host.mac) add('MAC', h('code', {}, host.mac));
  if (host.console) add('console', consoleText(host.console));
  const links = Object.entries(host.links ?? {});
  if (links.length) {
    add('links', joined(links.map(([name, l]) => [
      h('strong', {}, name), ' ', h('code', {}, l.address),
      Object.keys(l.ifname ?? {}).length
        ? [' (', joined(Object.entries(l.ifname).map(([os, ifn]) => [os, ' ', h('code', {}, ifn)])), ')']
        : null,
    ]), '; '));
  }
  if (host.idle_poweroff_min) add('idle', `powered off after ${host.idle_poweroff_min} min`);
  if (host.wake_schedule) add('wake', h('code', {}, host.wake_schedule));
  return rows.length ? h('dl', { class: 'facts' }, rows) : null;
}

function joined(parts, sep = ', ') {
  const out = [];
  parts.forEach((p, i) => { if (i) out.push(sep); out.push(p); });
  return out;
}

function powerText(p) {
  if (p.driver === 'ipmi') return ['IPMI ', h('code', {}, `${p.user}@${p.address}:${p.port}`), ` cipher ${p.cipher_suite}`];
  if (p.driver === 'wol') {
    if (p.via === 'relay') return ['Wake-on-LAN via ', h('strong', {}, p.relay), ' ', h('code', {}, `${p.command} -i ${p.interface}`)];
    if (p.via === 'raw') return ['Wake-on-LAN raw frame out of ', h('code', {}, p.interface)];
    return [`Wake-on-LAN ${p.via} to `, h('code', {}, `${p.target}:${p.port}`), p.source ? [' from ', h('code', {}, p.source)] : null];
  }
  if (p.driver === 'redfish') {
    return ['Redfish ', h('code', {}, `${p.user}@${p.url}`), p.system ? [' system ', h('code', {}, p.system)] : null,
      ` (${p.auth} auth)`, p.insecure
        ? [' ', h('strong', { class: 'insecure', title: 'insecure: true in the inventory' }, 'TLS certificate NOT checked')]
        : p.ca_file ? ' TLS checked against its CA file' : ' TLS checked'];
  }
  if (p.driver === 'command') {
    return ['command (', (p.actions ?? []).join(', '), ')', p.address ? [' at ', h('code', {}, p.address)] : null];
  }
  return h('code', {}, p.driver);
}

function consoleText(c) {
  if (c.type === 'tcp') return ['TCP ', h('code', {}, `${c.address}:${c.port}`)];
  if (c.type === 'device') return [h('code', {}, c.device), ` at ${c.speed} baud`];
  if (c.type === 'ipmi-sol') return 'IPMI serial over LAN';
  return h('code', {}, c.type);
}

/** A modal that shows the fingerprint once more and asks before trusting it. */
function trustDialog() {
  const title = h('h2', { id: 'trust-title' });
  const fp = h('code', { class: 'fp' });
  const confirm = h('button', { type: 'submit', value: 'trust', class: 'danger' }, 'Trust this key');
  const cancel = h('button', { type: 'submit', value: 'cancel', formnovalidate: true }, 'Cancel');
  const el = h('dialog', { class: 'trust-dialog', 'aria-labelledby': 'trust-title' },
    h('form', { method: 'dialog' },
      title,
      h('p', {}, 'testbedd will pin this fingerprint and from then on accept only this key:'),
      h('p', {}, fp),
      h('p', { class: 'help' }, 'Trust it only if it is the key the machine itself shows.'),
      h('div', { class: 'buttons' }, cancel, confirm)));
  return {
    el,
    ask(name, pk) {
      title.textContent = `Trust the ${pk.os} host key of ${name}?`;
      fp.textContent = pk.fingerprint;
      el.returnValue = '';
      el.showModal();
      cancel.focus();
      return new Promise((resolve) => {
        el.addEventListener('close', () => resolve(el.returnValue === 'trust'), { once: true });
      });
    },
  };
}
