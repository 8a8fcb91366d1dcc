// cellstable.mjs - the "Per cell" section of a matrix page: one row per cell
// (pair, protocol, direction and the swept values) with n and the medians of
// its ok runs, from /results; a note while no run has ended.  Per cell its
// spread too: the receiver's coefficient of variation (marked "noisy" over
// the results' threshold, 5 %) and a box plot of sender and receiver
// (boxplot.mjs: quartiles, whiskers min..max, every run a dot) on an axis
// shared by the cells of the same protocol, so that boxes compare down the
// column and a receiver box left of its sender box is loss.

import { MiniBox, rangeOf } from './boxplot.mjs';
import { h, replace } from './dom.mjs';
import { bitrateNode, pairText, paramText } from './format.mjs';

export class CellsTable {
  #head = h('tr');
  #body = h('tbody');
  #note = h('p', { class: 'muted' }, 'No run has ended yet.');
  #table;
  #boxes = [];

  constructor() {
    this.#table = h('table', { class: 'mx-table cells-table', hidden: true },
      h('caption', { class: 'visually-hidden' }, 'Summary per cell'),
      h('thead', {}, this.#head), this.#body);
    this.el = h('section', { class: 'mx-cells', 'aria-labelledby': 'mx-cells-title' },
      h('h2', { id: 'mx-cells-title' }, 'Per cell'),
      h('p', { class: 'help' }, 'A cell is one combination of pair, protocol, direction and swept values; the medians are of its ok runs. '
        + 'cv: the receiver\'s coefficient of variation (stdev / mean), "noisy" over 5 %: too noisy to compare. '
        + 'Spread: sender (sent) and receiver (recv) per cell, the box from the first to the third quartile, '
        + 'the line at the median, whiskers to min and max, a dot per run; one scale per protocol.'),
      this.#note,
      h('div', { class: 'table-wrap' }, this.#table));
  }

  /** Show cells (the /results cells that exist). */
  draw(cells) {
    const swept = sweptKeys(cells);
    for (const b of this.#boxes) b.dispose();
    this.#boxes = [];
    const ranges = {};
    for (const p of new Set(cells.map((c) => c.protocol))) {
      ranges[p] = rangeOf(cells.filter((c) => c.protocol === p).flatMap((c) => [c.sender_bps, c.receiver_bps]));
    }
    this.#note.hidden = cells.length > 0;
    this.#note.className = 'muted';
    this.#table.hidden = cells.length === 0;
    replace(this.#head, ['cell', 'client → server', 'protocol', 'direction', swept.length ? 'swept' : null, 'n',
      'sender (median)', 'receiver (median)', 'cv', 'spread (Gbit/s)'].filter(Boolean).map((c) => h('th', { scope: 'col' }, c)));
    replace(this.#body, cells.map((c) => h('tr', { dataset: { cell: String(c.cell) } },
      h('td', { 'data-label': 'cell', class: 'num' }, String(c.cell)),
      h('td', { 'data-label': 'client → server', class: 'pair' }, pairText(c)),
      h('td', { 'data-label': 'protocol' }, c.protocol),
      h('td', { 'data-label': 'direction' }, c.direction),
      swept.length ? h('td', { 'data-label': 'swept' }, h('code', {}, swept.filter((k) => c.params?.[k] != null).map((k) => paramText(k, c.params[k])).join(' '))) : null,
      h('td', { 'data-label': 'n', class: 'num n', title: `${c.n} ok of ${c.runs} runs${c.failed ? `, ${c.failed} failed` : ''}` },
        `${c.n}`, c.runs !== c.n ? h('span', { class: 'muted' }, ` of ${c.runs}`) : null),
      h('td', { 'data-label': 'sender (median)', class: 'num sender' }, bitrateNode(c.sender_bps?.median)),
      h('td', { 'data-label': 'receiver (median)', class: 'num receiver' }, bitrateNode(c.receiver_bps?.median)),
      cvCell(c.receiver_bps),
      h('td', { 'data-label': 'spread (Gbit/s)', class: 'spread' }, this.#box(c, ranges[c.protocol])))));
  }

  #box(c, range) {
    if (!c.sender_bps && !c.receiver_bps) return h('span', { class: 'muted' }, '—');
    const b = new MiniBox(`cell ${c.cell}: sender and receiver bitrate per run`);
    this.#boxes.push(b);
    return b.draw([{ name: 'sent', stats: c.sender_bps }, { name: 'recv', stats: c.receiver_bps }],
      { scale: 1e-9, unit: 'Gbit/s', range }).el;
  }

  /** The results could not be loaded: say why in place of the note. */
  failed(message) {
    this.#note.textContent = `Could not load the results: ${message}`;
    this.#note.className = 'alert';
  }
}

/** The receiver's cv as a percentage, marked noisy when the results say so. */
function cvCell(s) {
  const cv = s?.cv;
  const text = typeof cv === 'number' ? `${(cv * 100).toFixed(1)} %` : '—';
  return h('td', {
    'data-label': 'cv', class: `num cv${s?.noisy ? ' noisy' : ''}`, dataset: { noisy: s?.noisy ? '1' : '0' },
    title: s?.noisy ? 'too noisy to compare: the coefficient of variation is over the threshold (5 %)' : null,
  }, text, s?.noisy ? h('span', { class: 'noisy-mark' }, ' noisy') : null);
}

/**
 * The params whose values differ between cells of the same protocol (the
 * swept ones): udp_bitrate is null on TCP cells and set on UDP ones, which
 * is no sweep.
 */
function sweptKeys(cells) {
  if (cells.length < 2) return [];
  const keys = new Set(cells.flatMap((c) => Object.keys(c.params ?? {})));
  keys.delete('protocol');       // columns of their own
  keys.delete('direction');
  const protocols = [...new Set(cells.map((c) => c.params?.protocol ?? c.protocol))];
  return [...keys].filter((k) => protocols.some((p) => new Set(cells
    .filter((c) => (c.params?.protocol ?? c.protocol) === p)
    .map((c) => JSON.stringify(c.params?.[k] ?? null))).size > 1));
}
