// hostpower.mjs - what a machine's BMC says about its power, beside what
// reachability says (hosts.mjs), a warning when the two disagree, and the
// idle power-off countdown and the wake schedule's next time.
//
// The data is the host JSON's `bmc`, `idle_poweroff` and `wake` objects (GET
// /api/v1/hosts).  testbedd publishes a host.bmc event when the BMC's word or
// a mismatch changes, not after every reading, so hosts.mjs also re-reads
// the host now and then; the countdown itself ticks here, from `off_at`.

import { h, replace } from './dom.mjs';
import { absolute, duration, parseTime, since } from './time.mjs';

const POWER_TEXT = { on: 'on', off: 'off', unknown: 'unknown' };

/** "4 min 12 s" (under an hour), else as time.mjs says it. */
export function countdown(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return duration(ms);
}

function relTime(value) {
  return h('time', { datetime: value, title: absolute(value), dataset: { rel: '' } }, since(value) ?? '');
}

function bmcLine(bmc) {
  const power = POWER_TEXT[bmc.power] ?? bmc.power;
  const line = h('p', { class: 'bmc', dataset: { bmcPower: bmc.power } },
    h('span', { class: 'bmc-label' }, 'BMC'), ` (${bmc.method}): `,
    h('strong', { class: `bmc-${bmc.power}` }, power),
    bmc.checked_at ? [' · checked ', relTime(bmc.checked_at), ' ago'] : ' · not read yet');
  const error = bmc.error
    ? h('p', { class: 'last-error bmc-error' },
      h('span', { class: 'visually-hidden' }, 'BMC error: '),
      h('code', { class: 'code' }, bmc.error.code), ' ', bmc.error.message)
    : null;
  const mismatch = bmc.mismatch
    ? h('p', { class: 'mismatch', role: 'alert' },
      h('strong', {}, 'Mismatch: '), bmc.mismatch.message,
      bmc.mismatch.since ? [' (for ', relTime(bmc.mismatch.since), ')'] : null,
      h('span', { class: 'help' }, ' testbedd changes nothing by itself.'))
    : null;
  return [line, error, mismatch];
}

function idleLine(idle, now) {
  const after = `${idle.after_min} min`;
  if (idle.state === 'counting' && idle.off_at) {
    const at = parseTime(idle.off_at);
    return h('p', { class: 'idle', dataset: { idleState: 'counting' }, title: `at ${absolute(idle.off_at)}` },
      'Idle power-off in ', h('strong', { class: 'idle-left', dataset: { offAt: idle.off_at } },
        countdown(at - now)),
      ` (after ${after} unused)`);
  }
  const why = idle.state === 'held' ? 'waits: the machine is in use' : 'the machine is off';
  return h('p', { class: 'idle', dataset: { idleState: idle.state } },
    `Idle power-off after ${after} unused: `, h('span', { class: 'muted' }, why));
}

function wakeLine(wake) {
  const next = wake.next_at
    ? ['next ', h('time', { class: 'wake-next', datetime: wake.next_at, title: absolute(wake.next_at) }, absolute(wake.next_at))]
    : h('span', { class: 'muted' }, 'no time in the next 5 years');
  const last = wake.last_at
    ? [' · last ', h('time', { datetime: wake.last_at, title: absolute(wake.last_at) }, since(wake.last_at) ?? ''), ' ago: ',
      h('span', { class: 'wake-last' }, wake.last)]
    : null;
  return h('p', { class: 'wake', dataset: { wakeNext: wake.next_at ?? '' } },
    'Wakes at ', h('code', {}, wake.schedule), ' (cron, the testbedd host\'s time): ', next, last);
}

/** Draw host's BMC view, idle countdown and wake schedule into el (emptied when it has none). */
export function drawPower(el, host, now = Date.now()) {
  const parts = [];
  if (host.bmc) parts.push(bmcLine(host.bmc));
  if (host.idle_poweroff) parts.push(idleLine(host.idle_poweroff, now));
  if (host.wake) parts.push(wakeLine(host.wake));
  el.hidden = parts.length === 0;
  el.dataset.mismatch = host.bmc?.mismatch ? 'yes' : 'no';
  replace(el, parts);
}

/** Advance every countdown under root (call once a second). */
export function tickPower(root, now = Date.now()) {
  for (const el of root.querySelectorAll('.idle-left[data-off-at]')) {
    el.textContent = countdown(parseTime(el.dataset.offAt) - now);
  }
}
