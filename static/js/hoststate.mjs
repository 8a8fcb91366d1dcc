// hoststate.mjs - what the prober says about one machine on its host card:
// the badge (up, down, unknown), what an action does to it now (powering on,
// booting, shutting down), the line "up as ubuntu for 3 min" and the last
// error, and who holds it (an action or a matrix: state.held_by).  A refused
// host key has its own box (hostkey.mjs) below the line.

import { h, replace } from './dom.mjs';
import { absolute, since } from './time.mjs';

const REACH_TEXT = { up: 'up', down: 'down', unknown: 'unknown' };
const PHASE_TEXT = { powering_on: 'powering on…', booting: 'booting…', shutting_down: 'shutting down…' };

export class HostState {
  badge = h('span', { class: 'badge' });                    // for the card's head
  phase = h('span', { class: 'phase', hidden: true });      // for the card's head
  el = h('div', { class: 'state-block' });

  /** Show state st; keyBox (or null) goes below the line. */
  draw(st, keyBox) {
    this.badge.textContent = REACH_TEXT[st.reachability] ?? st.reachability;
    this.badge.className = `badge badge-${st.reachability}`;
    const phase = PHASE_TEXT[st.phase];
    this.phase.hidden = !phase;
    this.phase.textContent = phase ?? '';

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
    replace(this.el, line, heldLine(st.held_by), error, keyBox);
  }
}

/** "Held by matrix 7 by alice for 3 min" (state.held_by), or null. */
function heldLine(held) {
  if (!held) return null;
  const what = held.kind === 'matrix'
    ? h('a', { href: `#/matrices/${held.id}` }, `matrix ${held.id}`)
    : held.kind ? `${held.kind} ${held.id}` : held.holder;
  return h('p', { class: 'held-by', title: held.holder },
    'Held by ', h('strong', {}, what), held.by ? ` by ${held.by}` : null,
    held.since ? [' for ', relTime(held.since)] : null);
}

/** "up as ubuntu", "down", "unknown": for announcements. */
export function stateSentence(st) {
  if (st.reachability === 'up') return st.os ? `up as ${st.os}` : 'up';
  return st.reachability === 'down' ? 'down' : 'unknown';
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
