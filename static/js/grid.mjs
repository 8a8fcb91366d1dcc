// grid.mjs - a matrix's results at a glance: rows client host@OS, columns
// server host@OS; each square split into direction (rows) x protocol
// (columns), showing the receiver's median bitrate of that cell, shaded by
// its share of the link's rate (a link's `rate:` in the inventory), else of
// the fastest cell of the same protocol in this matrix.  A cell whose runs all failed or
// were stopped shows its error class; one not run yet shows a dot.  A
// click on a cell opens its latest run.  A cell whose receiver bitrate is
// too noisy to compare (the results' `noisy`: cv over 5 %) is marked with a
// dashed border and a "~" in its corner (CSS: its text stays the value).  Redrawn from /results whenever a
// run ends (matrix.mjs), so it fills in live.

import { api } from './api.mjs';
import { h, replace } from './dom.mjs';
import { bitrate } from './format.mjs';

const DIRS = ['forward', 'reverse', 'bidir'];
const PROTOS = ['tcp', 'udp'];

export class ResultsGrid {
  #onOpen;
  #body = h('div', { class: 'grid-wrap' });
  #rates = null;             // "server/link" -> bits/s, from GET /hosts (once)
  #last = null;              // the last draw's arguments, to draw again when the rates come

  /** onOpen(cell) opens the latest run of a cell (its index). */
  constructor(onOpen) {
    this.#onOpen = onOpen;
    this.el = h('section', { class: 'mx-grid', 'aria-labelledby': 'mx-grid-title', hidden: true },
      h('h2', { id: 'mx-grid-title' }, 'Grid'),
      h('p', { class: 'help' }, 'Rows: client host@OS; columns: server host@OS. Each square: forward/reverse by TCP/UDP, '
        + 'the receiver\'s median; the shade is its share of the link\'s rate (rate: in the inventory), '
        + 'else of the fastest cell of that protocol here. "~" and a dashed border: too noisy to compare '
        + '(the receiver\'s coefficient of variation is over 5 %).'),
      this.#body);
  }

  /** cells: /results cells; runs: /results runs (for the error class of failed cells). */
  draw(cells, runs) {
    this.#last = [cells, runs];
    if (this.#rates === null) {
      this.#rates = new Map();
      api('GET', 'hosts').then(({ hosts }) => {
        for (const m of hosts) for (const [name, l] of Object.entries(m.links ?? {})) if (l.rate_bps) this.#rates.set(`${m.name}/${name}`, l.rate_bps);
        if (this.#rates.size) this.draw(...this.#last);
      }, () => {});
    }
    const list = cells.filter(Boolean);
    this.el.hidden = list.length === 0;
    if (list.length === 0) return;
    const errors = new Map();       // cell -> error class of its last failed or stopped run
    for (const r of runs) if (r.error_class && r.state !== 'ok') errors.set(r.cell, r.error_class);
    const rowKey = (c) => `${c.client}@${c.client_os ?? '…'}`;
    const colKey = (c) => `${c.server}@${c.server_os ?? '…'}`;
    const rows = [...new Set(list.map(rowKey))];
    const cols = [...new Set(list.map(colKey))];
    const best = {};
    for (const c of list) {
      const v = c.receiver_bps?.median;
      if (typeof v === 'number') best[c.protocol] = Math.max(best[c.protocol] ?? 0, v);
    }
    const dirs = DIRS.filter((d) => list.some((c) => c.direction === d));
    const protos = PROTOS.filter((p) => list.some((c) => c.protocol === p));

    const square = (rk, ck) => {
      const mine = list.filter((c) => rowKey(c) === rk && colKey(c) === ck);
      if (mine.length === 0) return h('td', { class: 'grid-empty' }, '—');
      return h('td', {}, h('table', { class: 'grid-square' },
        h('caption', { class: 'visually-hidden' }, `${rk} to ${ck}`),
        h('thead', {}, h('tr', {}, h('td'), protos.map((p) => h('th', { scope: 'col' }, p)))),
        h('tbody', {}, dirs.map((d) => h('tr', {},
          h('th', { scope: 'row' }, d === 'forward' ? 'fwd' : d === 'reverse' ? 'rev' : 'bidir'),
          protos.map((p) => h('td', {}, mine.filter((c) => c.direction === d && c.protocol === p)
            .map((c) => this.#cell(c, this.#rates.get(`${c.server}/${c.link}`) ?? best[p], errors.get(c.cell))))))))));
    };

    replace(this.#body, h('table', { class: 'grid' },
      h('caption', { class: 'visually-hidden' }, 'Receiver median per cell: client rows, server columns'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'client ↓ server →'),
        cols.map((ck) => h('th', { scope: 'col' }, ck)))),
      h('tbody', {}, rows.map((rk) => h('tr', {}, h('th', { scope: 'row' }, rk), cols.map((ck) => square(rk, ck)))))));
  }

  #cell(c, best, error) {
    const v = c.receiver_bps?.median;
    const ok = typeof v === 'number';
    const ended = (c.n ?? 0) + (c.failed ?? 0) + (c.stopped ?? 0);
    const state = ok ? 'ok' : ended > 0 ? (c.failed ? 'failed' : 'stopped') : 'pending';
    const swept = sweptLabel(c);
    const noisy = ok && c.receiver_bps?.noisy === true;
    const b = h('button', {
      type: 'button', class: `grid-cell grid-${state}${noisy ? ' grid-noisy' : ''}`,
      dataset: { cell: String(c.cell), state, protocol: c.protocol, direction: c.direction, noisy: noisy ? '1' : '0' },
      title: `cell ${c.cell}: ${c.client}@${c.client_os ?? '?'} → ${c.server}@${c.server_os ?? '?'} ${c.protocol} ${c.direction}`
        + (ok ? `, receiver median ${bitrate(v)} over ${c.n} run${c.n === 1 ? '' : 's'}` : '')
        + (noisy ? `, too noisy to compare (cv ${typeof c.receiver_bps.cv === 'number' ? `${(c.receiver_bps.cv * 100).toFixed(1)} %` : 'unknown'})` : '')
        + (c.failed ? `, ${c.failed} failed` : '') + (c.stopped ? `, ${c.stopped} stopped` : ''),
    },
    ok ? bitrate(v) : state === 'pending' ? '·' : (error ?? state),
    swept ? h('small', {}, swept) : null);
    if (ok && best > 0) {
      b.style.setProperty('--share', String(Math.max(0.08, Math.min(1, v / best))));
      b.dataset.share = (v / best).toFixed(3);
    }
    b.addEventListener('click', () => this.#onOpen(c.cell));
    return b;
  }
}

/** Non-default parameters that tell cells of one square apart (-P 4, -l 1400). */
function sweptLabel(c) {
  const p = c.params ?? {};
  const parts = [];
  if (p.parallel > 1) parts.push(`-P ${p.parallel}`);
  if (p.length != null) parts.push(`-l ${p.length}`);
  if (p.window != null) parts.push(`-w ${p.window}`);
  if (p.congestion != null) parts.push(`-C ${p.congestion}`);
  if (p.tos != null) parts.push(`-S ${p.tos}`);
  if (p.protocol === 'udp' && p.bitrate != null && p.bitrate !== '0') parts.push(`-b ${p.bitrate}`);
  return parts.join(' ');
}
