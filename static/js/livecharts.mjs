// livecharts.mjs - the live chart of each run in progress on a matrix page
// (one per running pair: a round of disjoint pairs runs several at once).
//
// A chart starts when its run starts; a late viewer's chart first gets the
// run's intervals so far (GET /runs/{id}: a running run's come from its
// events), then the live tail from run.interval events; IntervalChart keeps
// each interval once whichever way it came.  When no run is in progress the
// last one's chart stays until the next starts.

import { api } from './api.mjs';
import { IntervalChart } from './charts.mjs';
import { h, replace } from './dom.mjs';
import { pairText, statePill } from './format.mjs';

export class LiveCharts {
  #runs = new Map();       // run id -> {chart, fig, caption, r, ended}

  constructor() {
    this.el = h('div', { class: 'live-charts' });
  }

  /** A run (a row of the runs table: id, seq, client, server, protocol, direction, state) is in progress. */
  show(r) {
    let e = this.#runs.get(r.id);
    if (!e) {
      const label = `Run ${r.seq}`;
      const chart = new IntervalChart(r.protocol, label);
      const caption = h('figcaption');
      const fig = h('figure', { class: 'live-chart', dataset: { run: String(r.id), seq: String(r.seq) } }, caption, chart.el);
      e = { chart, fig, caption, r, ended: false };
      this.#runs.set(r.id, e);
      this.el.append(fig);
      this.#history(e);
    }
    e.r = r;
    e.ended = false;
    this.#caption(e);
    this.#prune();
  }

  /** A run.interval event's data. */
  interval(r, side, n, interval) {
    if (!this.#runs.has(r.id)) this.show(r);
    this.#runs.get(r.id).chart.add(side, n, interval);
  }

  /** Run r (its row) ended. */
  ended(r) {
    const e = this.#runs.get(r.id);
    if (!e) return;
    e.r = r;
    e.ended = true;
    this.#caption(e);
    this.#prune();
  }

  clear() {
    for (const e of this.#runs.values()) e.chart.dispose();
    this.#runs.clear();
    replace(this.el);
  }

  get size() { return this.#runs.size; }

  /** Ended charts go when a run is in progress; else only the latest ended stays. */
  #prune() {
    const all = [...this.#runs.values()];
    const running = all.some((e) => !e.ended);
    const keep = running ? null : all.filter((e) => e.ended).sort((a, b) => b.r.seq - a.r.seq)[0];
    for (const e of all) {
      if (e.ended && e !== keep) {
        e.chart.dispose();
        e.fig.remove();
        this.#runs.delete(e.r.id);
      }
    }
  }

  #caption(e) {
    const r = e.r;
    replace(e.caption, h('strong', {}, `seq ${r.seq}`), ' ', `${pairText(r)} ${r.protocol} ${r.direction} `,
      statePill(r.state));
  }

  async #history(e) {
    try {
      const { run } = await api('GET', `runs/${e.r.id}`);
      e.chart.addAll(run.intervals);
    } catch { /* the live tail still comes */ }
  }
}
