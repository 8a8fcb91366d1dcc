// runstable.mjs - the "Runs" section of a matrix page: every run in order, a
// row each (its seq links to the run's page, #/runs/ID; a click on the row
// goes there too), with the downloads: CSV of the runs or the cells and the
// results as JSON, as testbedd gives them.  It holds the runs the page knows (run id -> the run,
// seq -> run id) and updates a row in place as run.state events and
// /results arrive; a run's state never goes back (pending < running <
// ended).  The run objects it hands out are the ones it updates.

import { h, replace } from './dom.mjs';
import { bitrateNode, count, pairText, percent, RUN_ENDED, statePill } from './format.mjs';

const RUN_RANK = { pending: 0, running: 1 };       // every other state: 2 (ended)
const rrank = (s) => RUN_RANK[s] ?? 2;

export class RunsTable {
  #rows = new Map();        // run id -> {r, tr}
  #bySeq = new Map();       // seq -> run id
  #body = h('tbody');
  #onOpen;

  /** The section for matrix id; onOpen(r) opens run r (a click on its row). */
  constructor(id, onOpen) {
    this.#onOpen = onOpen;
    const csv = (view) => h('a', {
      href: `api/v1/matrices/${id}/results?format=csv&view=${view}`, download: `matrix-${id}-${view}.csv`,
      class: `csv-${view}`,
    }, `CSV (${view})`);
    this.el = h('section', { class: 'mx-runs', 'aria-labelledby': 'mx-runs-title' },
      h('div', { class: 'section-head' }, h('h2', { id: 'mx-runs-title' }, 'Runs'),
        h('span', { class: 'downloads' }, 'Download ', csv('runs'), ' · ', csv('cells'), ' · ',
          h('a', { href: `api/v1/matrices/${id}/results`, download: `matrix-${id}-results.json`, class: 'json-results' },
            'JSON'))),
      h('div', { class: 'table-wrap' },
        h('table', { class: 'mx-table runs-table' },
          h('caption', { class: 'visually-hidden' }, 'Every run in order; a run\'s seq links to its page'),
          h('thead', {}, h('tr', {}, ['seq', 'client → server', 'protocol', 'direction', 'state', 'sender', 'receiver',
            'retransmits', 'UDP loss', 'error'].map((c) => h('th', { scope: 'col' }, c)))),
          this.#body)));
  }

  /** Show list (the runs of GET /matrices/ID, sorted here by seq) instead of what was shown. */
  load(list) {
    this.#rows.clear();
    this.#bySeq.clear();
    replace(this.#body, list.sort((a, b) => a.seq - b.seq).map((r) => {
      const row = { r, tr: h('tr', { dataset: { run: String(r.id), seq: String(r.seq), cell: String(r.cell) } }) };
      // A click anywhere on the row opens the run too (the seq button is the keyboard's way).
      row.tr.addEventListener('click', (e) => { if (!e.target.closest('button, a')) this.#onOpen(row.r); });
      this.#rows.set(r.id, row);
      this.#bySeq.set(r.seq, r.id);
      this.#draw(row);
      return row.tr;
    }));
  }

  /** Run id (the object this table updates), or undefined. */
  get(id) { return this.#rows.get(id)?.r; }

  has(id) { return this.#rows.has(id); }

  get size() { return this.#rows.size; }

  /** Every run, in seq order. */
  all() { return [...this.#rows.values()].map((row) => row.r); }

  /** The id of the run with seq, or undefined. */
  idOfSeq(seq) { return this.#bySeq.get(seq); }

  /** Take keys of d into run id, unless d's state is older than the shown one. */
  update(id, d, keys) {
    const row = this.#rows.get(id);
    if (!row || rrank(d.state ?? row.r.state) < rrank(row.r.state)) return;
    for (const k of keys) if (k in d) row.r[k] = d[k];
    this.#draw(row);
  }

  /** The run to open for cell: its latest ended run, else the running one, else its first. */
  pick(cell) {
    const mine = this.all().filter((r) => r.cell === cell);
    return mine.filter((r) => RUN_ENDED.has(r.state)).sort((a, b) => b.seq - a.seq)[0]
      ?? mine.find((r) => r.state === 'running') ?? mine[0];
  }

  #draw(row) {
    const { r, tr } = row;
    tr.dataset.state = r.state;
    const open = h('a', { href: `#/runs/${r.id}`, class: 'run-open', 'aria-label': `Run ${r.seq}: commands and raw output` },
      String(r.seq));
    const udp = r.protocol === 'udp';
    replace(tr,
      h('td', { 'data-label': 'seq', class: 'num' }, open),
      h('td', { 'data-label': 'client → server', class: 'pair' }, pairText(r),
        r.family === 'ipv6' ? h('span', { class: 'muted' }, ' over IPv6') : null),
      h('td', { 'data-label': 'protocol' }, r.protocol),
      h('td', { 'data-label': 'direction' }, r.direction),
      h('td', { 'data-label': 'state', class: 'state-cell' }, statePill(r.state)),
      h('td', { 'data-label': 'sender', class: 'num sender' }, bitrateNode(r.sender_bps)),
      h('td', { 'data-label': 'receiver', class: 'num receiver' }, bitrateNode(r.receiver_bps)),
      h('td', { 'data-label': 'retransmits', class: ['num', udp && 'na'] }, udp ? '—' : count(r.retransmits)),
      h('td', { 'data-label': 'UDP loss', class: ['num', !udp && 'na'] }, udp ? percent(r.lost_percent) : '—'),
      h('td', { 'data-label': 'error', class: ['error-cell', !r.error_class && 'na'], title: r.error_message ?? null },
        r.error_class ? h('code', { class: 'code' }, r.error_class) : '—'));
  }
}
