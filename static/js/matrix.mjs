// matrix.mjs - one matrix (#/matrices/ID): the page that composes its parts
// and keeps them in step with the daemon.  The parts, top to bottom: the head
// (matrixhead.mjs), the progress and Cancel / Resume / Rerun
// (matrixprogress.mjs, matrixactions.mjs), the run in progress with its live
// bitrate and charts (nowrunning.mjs), the boots (bootstable.mjs), the
// results grid (grid.mjs), the runs table filling in as runs end
// (runstable.mjs), the summary per cell (cellstable.mjs), the hosts
// (hostmeta.mjs), the comparison with a baseline (compare.mjs) and the spec;
// a matrix a schedule started says its CI gate's verdict under the head
// (gateline.mjs: the matrix's `gate`, then its matrix.gate event);
// a run opens on its own page (#/runs/ID, run.mjs).  A cell has a permalink,
// #/matrices/ID?cell=N: the page scrolls to it, marks it in the grid and the
// per-cell table and shows its runs and a link to its history across
// matrices (history.mjs); a click on a grid square goes there.  Every table
// has CSV and JSON downloads (export.mjs).
//
// The page opens its own event stream (GET /api/v1/events?matrix=ID:
// matrix.state, matrix.boot, run.state, run.interval, run.waiting, matrix.gate) before it fetches the
// matrix, and applies what arrives meanwhile after the fetch, so nothing
// falls between the two.  An event may still be older than the fetched
// state, so a run's state never goes back (pending < running < ended) and
// neither does the matrix's; only a resume (an ended matrix queued again)
// sends them back, and that makes the page fetch everything again.  OS
// personas and the per-cell summary are not in the events: /results is
// fetched again when a run ends.

import { api } from './api.mjs';
import { BootsTable } from './bootstable.mjs';
import { CellsTable } from './cellstable.mjs';
import { compareSection } from './compare.mjs';
import { h, replace } from './dom.mjs';
import { exportBar, rowsOfTable } from './export.mjs';
import { gateLine } from './gateline.mjs';
import { bitrateNode, MATRIX_ENDED, pairText, paramText, RUN_ENDED, statePill } from './format.mjs';
import { ResultsGrid } from './grid.mjs';
import { hostsSection } from './hostmeta.mjs';
import { LiveStream } from './live.mjs';
import { MatrixActions } from './matrixactions.mjs';
import { MatrixHead } from './matrixhead.mjs';
import { MatrixProgress } from './matrixprogress.mjs';
import { NowRunning } from './nowrunning.mjs';
import { RunsTable } from './runstable.mjs';

const MATRIX_RANK = { queued: 0, running: 1 };    // every other state: 2 (ended)
const mrank = (s) => MATRIX_RANK[s] ?? 2;
const RUN_EVENT_KEYS = ['state', 'error_class', 'error_message', 'sender_bps', 'receiver_bps', 'retransmits',
  'lost_percent', 'client_command', 'server_command'];
const RUN_ROW_KEYS = [...RUN_EVENT_KEYS, 'client_os', 'server_os', 'started_at', 'finished_at', 'attempts'];
const EVENT_TYPES = ['matrix.state', 'matrix.boot', 'run.state', 'run.interval', 'run.waiting', 'matrix.gate'];

/** Show matrix id in main (cell: the cell to show, or null); returns the function that stops the page. */
export function renderMatrix(main, ctx, id, cell = null) {
  const page = new MatrixPage(main, ctx, id, cell);
  return () => page.stop();
}

class MatrixPage {
  #main;
  #id;
  #m = null;               // the matrix (without runs)
  #loaded = false;
  #queue = [];             // events that came before the fetch
  #generation = 0;         // a fetch of an older generation is dropped
  #resultsAsked = 0;
  #resultsTimer = null;
  #status = h('p', { class: 'muted', role: 'status' }, 'Loading the matrix…');
  #streamNote = h('p', { class: 'help stream-note', hidden: true });
  #body;
  #head;
  #cell;                   // the cell of ?cell=N, or null
  #cellPanel = h('section', { class: 'mx-cell-focus', 'aria-labelledby': 'mx-cell-title', hidden: true });
  #cellsData = [];         // the /results cells
  #scrolled = false;
  #marks;
  #progress = new MatrixProgress();
  #actions;
  #runs;
  #now;
  #boots = new BootsTable();
  #grid;
  #cells = new CellsTable();
  #hosts;
  #comparison;
  #gate;
  #live;
  #ticker;

  constructor(main, ctx, id, cell) {
    this.#main = main;
    this.#id = id;
    this.#cell = cell;
    const open = (r) => { location.hash = `#/runs/${r.id}`; };
    this.#head = new MatrixHead(id);
    this.#actions = new MatrixActions(ctx, id, {
      onCancel: (matrix) => { this.#setMatrix(matrix); this.#drawAll(); },
      onResume: () => this.#load(),
    });
    this.#runs = new RunsTable(id, open);
    this.#now = new NowRunning(this.#runs, () => this.#m, open);
    this.#grid = new ResultsGrid((n) => this.#focusCell(n));
    this.#comparison = compareSection(id);
    this.#gate = gateLine((q) => this.#comparison.show(q));
    this.#hosts = hostsSection(id);
    this.#body = h('div', { class: 'mx-body', hidden: true },
      h('section', { class: 'mx-status', 'aria-label': 'Progress' }, this.#progress.nodes, this.#actions.nodes),
      this.#now.el, this.#boots.el, this.#cellPanel, this.#grid.el, this.#runs.el, this.#cells.el, this.#hosts.el,
      this.#comparison.el, this.#head.spec);
    // the tables other modules draw get their downloads here, read from what they show
    tableDownloads(this.#cells.el, `matrix-${id}-cells-summary`);
    tableDownloads(this.#comparison.el, `matrix-${id}-compare`);
    tableDownloads(this.#hosts.el, `matrix-${id}-hosts`);
    tableDownloads(this.#boots.el, `matrix-${id}-boots`);
    // the grid and the tables redraw themselves (the grid again when the link rates come): mark the cell again
    this.#marks = new MutationObserver(() => this.#markCell());
    this.#marks.observe(this.#body, { childList: true, subtree: true });
    replace(main, this.#head.nodes, this.#gate.el, this.#status, this.#streamNote, this.#body);
    this.#listen();
    this.#ticker = setInterval(() => { if (this.#loaded && this.#m?.state === 'running') this.#progress.draw(this.#m); }, 1000);
  }

  stop() {
    this.#generation += 1;
    clearInterval(this.#ticker);
    clearTimeout(this.#resultsTimer);
    this.#live.stop();
    this.#now.stop();
    this.#marks.disconnect();
    delete this.#main.dataset.matrixState;
  }

  // ---------------------------------------------------------------- the stream

  #listen() {
    // read by the live plots' worker, which draws each interval before the page has it
    const live = new LiveStream(EVENT_TYPES, { matrix: this.#id }, { source: (url, names) => this.#now.eventSource(url, names) });
    const onEvent = (e) => { if (this.#loaded) this.#apply(e.detail); else this.#queue.push(e.detail); };
    for (const t of EVENT_TYPES) live.addEventListener(t, onEvent);
    live.addEventListener('reset', () => { this.#queue = []; this.#load(); });
    live.addEventListener('state', (e) => {
      this.#streamNote.hidden = e.detail === 'live' || e.detail === 'connecting';
      this.#streamNote.textContent = 'The live updates of this matrix are reconnecting…';
    });
    live.start();
    live.whenOpen(2000).then(() => { if (this.#generation === 0) this.#load(); });
    this.#live = live;
  }

  // ---------------------------------------------------------------- loading

  async #load() {
    const mine = ++this.#generation;
    this.#loaded = false;
    try {
      const reply = await api('GET', `matrices/${this.#id}`);
      if (mine !== this.#generation) return;
      const { runs: list, ...matrix } = reply.matrix;
      this.#now.clear();
      this.#runs.load(list);
      this.#m = null;
      this.#setMatrix(matrix);
      this.#gate.take(matrix.gate);
      this.#now.loaded(matrix.progress?.current_seq);
      this.#status.hidden = true;
      this.#body.hidden = false;
      this.#loaded = true;
      const pending = this.#queue;
      this.#queue = [];
      for (const ev of pending) this.#apply(ev);
      this.#drawAll();
      if (list.some((r) => RUN_ENDED.has(r.state))) this.#loadResults(0);
    } catch (err) {
      if (mine !== this.#generation || err.status === 401) return;
      const id = this.#id;
      replace(this.#status, err.status === 404 ? `There is no matrix ${id}: ` : `Could not load matrix ${id}: ${err.message}. `,
        h('a', { href: '#/matrices' }, 'see the list of matrices'), '.');
      this.#status.className = 'alert';
      this.#status.hidden = false;
    }
  }

  /** GET /results after ms (one fetch for runs that end together): OS personas and the cells. */
  #loadResults(ms = 300) {
    clearTimeout(this.#resultsTimer);
    this.#resultsTimer = setTimeout(async () => {
      const ask = ++this.#resultsAsked;
      const mine = this.#generation;
      try {
        const t = await api('GET', `matrices/${this.#id}/results`);
        if (ask !== this.#resultsAsked || mine !== this.#generation) return;
        for (const r of t.runs) this.#runs.update(r.id, r, RUN_ROW_KEYS);
        this.#cellsData = t.cells;
        this.#cells.draw(t.cells.filter(Boolean));
        this.#grid.draw(t.cells, t.runs);
        this.#drawCell();
        this.#comparison.refresh();
        this.#hosts.refresh();
      } catch (err) {
        if (err.status === 401 || ask !== this.#resultsAsked) return;
        this.#cells.failed(err.message);
      }
    }, ms);
  }

  /** The matrix's own fields (finished_at, error) once it ended. */
  async #refreshMatrix() {
    const mine = this.#generation;
    try {
      const { matrix } = await api('GET', `matrices/${this.#id}?runs=0`);
      if (mine === this.#generation) { this.#setMatrix(matrix); this.#drawAll(); }
    } catch { /* the events said enough */ }
  }

  /** Take a matrix (or a matrix.state event's fields), unless it is older than what is shown. */
  #setMatrix(d) {
    const m = this.#m;
    if (m) {
      if (mrank(d.state) < mrank(m.state)) return;
      if (d.progress && m.progress && mrank(d.state) === mrank(m.state) && d.progress.done < m.progress.done) return;
    }
    this.#m = { ...(m ?? {}), ...d };
    this.#progress.take(d);
  }

  // ---------------------------------------------------------------- events

  #apply(ev) {
    const d = ev.data;
    if (d.matrix !== this.#id) return;
    if (ev.type === 'matrix.state') this.#matrixState(d);
    else if (ev.type === 'run.state') this.#runState(d);
    else if (ev.type === 'matrix.boot') {
      this.#refreshMatrix();
      this.#now.boot(d);
    } else if (ev.type === 'run.interval') this.#now.interval(d);
    else if (ev.type === 'run.waiting') this.#now.waiting(d);
    else if (ev.type === 'matrix.gate') this.#gate.judged(d);
  }

  #matrixState(d) {
    if (this.#m && mrank(this.#m.state) === 2 && mrank(d.state) < 2) {   // resumed: its runs go back to pending
      this.#load();
      return;
    }
    this.#setMatrix(d);
    if (d.progress) this.#now.pick(d.progress.current_seq);
    this.#drawAll();
    if (MATRIX_ENDED.has(this.#m.state)) {
      this.#loadResults(0);
      this.#refreshMatrix();
    }
  }

  #runState(d) {
    if (!this.#runs.has(d.run)) { this.#load(); return; }
    const before = this.#runs.get(d.run).state;
    this.#runs.update(d.run, d, RUN_EVENT_KEYS);
    if (RUN_ENDED.has(d.state) && !RUN_ENDED.has(before)) this.#loadResults();
    if (this.#cell !== null && this.#runs.get(d.run)?.cell === this.#cell) this.#drawCell();
    this.#now.runState(d);
  }

  // ---------------------------------------------------------------- one cell

  /** Show cell n (a click on the grid): its permalink in the address bar, without loading the page again. */
  #focusCell(n) {
    this.#cell = n;
    this.#scrolled = false;
    history.replaceState(null, '', `#/matrices/${this.#id}?cell=${n}`);
    this.#drawCell();
  }

  /** The cell of ?cell=N: marked in the grid and the per-cell table, its runs and history linked. */
  #drawCell() {
    const n = this.#cell;
    this.#markCell();
    if (n === null) return;
    const c = this.#cellsData[n];
    const runs = this.#runs.all().filter((r) => r.cell === n);
    if (!c && runs.length === 0) {
      replace(this.#cellPanel, h('p', { class: 'alert' }, `Matrix ${this.#id} has no cell ${n}.`));
      this.#cellPanel.hidden = !this.#loaded;
      return;
    }
    const any = c ?? runs[0];
    const pick = this.#runs.pick(n);
    const params = Object.entries(any.params ?? {}).filter(([, v]) => v !== null).map(([k, v]) => paramText(k, v)).join(' ');
    replace(this.#cellPanel,
      h('div', { class: 'section-head' },
        h('h2', { id: 'mx-cell-title' }, `Cell ${n}`),
        h('span', { class: 'downloads' },
          h('a', { href: `#/matrices/${this.#id}/cells/${n}/history`, class: 'cell-history' }, 'History across matrices'),
          pick ? [' · ', h('a', { href: `#/runs/${pick.id}`, class: 'cell-latest' }, 'latest run')] : null, ' · ',
          h('a', { href: `#/matrices/${this.#id}`, class: 'cell-close' }, 'all cells'))),
      h('p', {}, pairText(any), ` · ${any.protocol} ${any.direction}`,
        params ? [' · ', h('code', {}, params)] : null),
      c?.receiver_bps ? h('p', {}, `receiver median `, bitrateNode(c.receiver_bps.median),
        ` (min `, bitrateNode(c.receiver_bps.min), `, max `, bitrateNode(c.receiver_bps.max), `, n ${c.n})`) : null,
      h('ul', { class: 'cell-runs' }, runs.map((r) => h('li', {},
        h('a', { href: `#/runs/${r.id}`, dataset: { run: String(r.id) } }, `Run ${r.seq}`), ' ',
        statePill(r.state), ' ', bitrateNode(r.receiver_bps)))));
    this.#cellPanel.dataset.cell = String(n);
    this.#cellPanel.hidden = false;
    if (!this.#scrolled && this.#loaded) {
      this.#scrolled = true;
      this.#cellPanel.scrollIntoView({ block: 'start' });
    }
  }

  /** The cell marked in the grid and the tables (only class changes: the observer watches children). */
  #markCell() {
    const n = this.#cell;
    const want = n === null ? [] : [...this.#body.querySelectorAll(
      `.grid-cell[data-cell="${n}"], .cells-table tr[data-cell="${n}"], .runs-table tr[data-cell="${n}"]`)];
    for (const el of this.#body.querySelectorAll('.cell-focus')) if (!want.includes(el)) el.classList.remove('cell-focus');
    for (const el of want) if (!el.classList.contains('cell-focus')) el.classList.add('cell-focus');
  }

  // ---------------------------------------------------------------- drawing

  #drawAll() {
    const m = this.#m;
    this.#boots.draw(m?.boots);
    this.#head.draw(m);
    this.#main.dataset.matrixState = m.state;
    this.#progress.draw(m);
    this.#actions.draw(m);
    this.#now.draw();
    if (this.#cell !== null && this.#cellPanel.hidden) this.#drawCell();
  }
}

/**
 * CSV and JSON downloads of the first table in section (another module
 * draws it), read from its cells; shown while that table has rows.
 */
function tableDownloads(section, name) {
  const head = section.querySelector('h2');
  const table = () => section.querySelector('table:not([hidden])');
  const bar = exportBar(name, () => (table() ? rowsOfTable(table()) : []));
  const show = () => {
    const none = !table()?.querySelector('tbody > tr');
    if (bar.hidden !== none) bar.hidden = none;   // the same value again would be a mutation too
  };
  show();
  new MutationObserver(show).observe(section, { childList: true, subtree: true, attributes: true, attributeFilter: ['hidden'] });
  if (head) head.after(bar);
  else section.prepend(bar);
}
