// history.mjs - one cell across every matrix that has it
// (#/matrices/ID/cells/N/history; GET /api/v1/matrices/{id}/cells/{n}/history).
//
// A chart of the series, a box per matrix (whiskers min to max, the box
// from the first to the third quartile when the results give them, else
// flat at the median), the medians joined by a line; and a table with the
// spread per matrix, each row linking to that matrix's grid with the cell
// marked ("the grid as of matrix M", #/matrices/M?cell=C).  The metric and
// "only matrices with this one's name" (a history per spec) live in the
// address, so the view is a link.  Chart: PNG and SVG; table: CSV and JSON.

import { api } from './api.mjs';
import { boxData } from './boxplot.mjs';
import { chartColours, chartExportBar, loadECharts, sizedChart } from './charts.mjs';
import { h, replace } from './dom.mjs';
import { exportBar } from './export.mjs';
import { bitrate, count, matrixPageFailed, pairText, paramText, percent, statePill } from './format.mjs';
import { absolute } from './time.mjs';

const METRICS = {
  receiver_bps: { label: 'receiver bitrate', unit: 'Gbit/s', scale: 1e-9, text: bitrate },
  sender_bps: { label: 'sender bitrate', unit: 'Gbit/s', scale: 1e-9, text: bitrate },
  lost_percent: { label: 'UDP loss', unit: '%', scale: 1, text: percent },
  jitter_ms: { label: 'UDP jitter', unit: 'ms', scale: 1, text: (v) => (typeof v === 'number' ? `${v.toFixed(3)} ms` : '—') },
  retransmits: { label: 'retransmits', unit: 'count', scale: 1, text: count },
};

/** Show the history of cell of matrix id; query: the address's (metric, same_name). */
export function renderHistory(main, ctx, id, cell, query) {
  const page = new HistoryPage(main, id, cell, query);
  return () => page.stop();
}

class HistoryPage {
  #id;
  #cell;
  #metric;
  #sameName;
  #name = null;            // the matrix's name (for "only this name")
  #asked = 0;
  #stopped = false;
  #chart = null;
  #option = null;
  #observer = null;
  #points = [];
  #status = h('p', { class: 'muted', role: 'status' }, 'Loading the history…');
  #key = h('p', { class: 'history-key' });
  #chartEl = h('div', { class: 'chart chart-history', role: 'img' });
  #body = h('tbody');
  #note = h('p', { class: 'help history-note', hidden: true });
  #content;

  constructor(main, id, cell, query) {
    this.#id = id;
    this.#cell = cell;
    this.#metric = METRICS[query.get('metric')] ? query.get('metric') : 'receiver_bps';
    this.#sameName = query.get('same_name') === '1';
    const metric = h('select', { name: 'metric' },
      Object.entries(METRICS).map(([k, m]) => h('option', { value: k, selected: k === this.#metric }, m.label)));
    const same = h('input', { type: 'checkbox', name: 'same_name', checked: this.#sameName });
    metric.addEventListener('change', () => { this.#metric = metric.value; this.#remember(); this.#load(); });
    same.addEventListener('change', () => { this.#sameName = same.checked; this.#remember(); this.#load(); });
    const file = () => `matrix-${id}-cell-${cell}-history-${this.#metric}`;
    const chartBar = chartExportBar(`matrix-${id}-cell-${cell}-history`, () => [{ chart: this.#chart, option: this.#option }]);
    const tableBar = exportBar(file, () => this.#rows());
    const table = h('table', { class: 'mx-table history-table' },
      h('caption', { class: 'visually-hidden' }, 'The cell per matrix, oldest first'),
      h('thead', {}, h('tr', {}, ['matrix', 'state', 'created', 'n', 'median', 'min', 'q1', 'q3', 'max', 'grid']
        .map((c) => h('th', { scope: 'col' }, c)))),
      this.#body);
    this.#content = h('div', { class: 'history-body', hidden: true },
      h('section', { class: 'history-chart', 'aria-labelledby': 'history-chart-title' },
        h('div', { class: 'section-head' }, h('h2', { id: 'history-chart-title' }, 'Series'), chartBar),
        this.#chartEl),
      h('section', { class: 'history-points', 'aria-labelledby': 'history-table-title' },
        h('div', { class: 'section-head' }, h('h2', { id: 'history-table-title' }, 'Per matrix'), tableBar),
        this.#note,
        h('div', { class: 'table-wrap' }, table)));
    replace(main,
      h('article', { class: 'history-page', dataset: { matrix: String(id), cell: String(cell) } },
        h('p', { class: 'crumbs' }, h('a', { href: '#/matrices' }, 'Matrices'), ' › ',
          h('a', { href: `#/matrices/${id}?cell=${cell}`, class: 'crumb-cell' }, `matrix #${id}, cell ${cell}`)),
        h('h1', {}, `History of cell ${cell} of matrix #${id}`),
        this.#key,
        h('form', { class: 'mx-filters', 'aria-label': 'What to show' },
          h('label', {}, 'Metric ', metric),
          h('label', {}, same, ' only matrices with this one\'s name')),
        this.#status,
        this.#content));
    this.#load();
  }

  stop() {
    this.#stopped = true;
    this.#observer?.disconnect();
    this.#chart?.dispose();
  }

  #remember() {
    const p = new URLSearchParams();
    if (this.#metric !== 'receiver_bps') p.set('metric', this.#metric);
    if (this.#sameName) p.set('same_name', '1');
    const qs = p.toString();
    history.replaceState(null, '', `#/matrices/${this.#id}/cells/${this.#cell}/history${qs ? `?${qs}` : ''}`);
  }

  async #load() {
    const ask = ++this.#asked;
    try {
      if (this.#sameName && this.#name === null) {
        const { matrix } = await api('GET', `matrices/${this.#id}?runs=0`);
        this.#name = matrix.name;
      }
      const p = new URLSearchParams({ metric: this.#metric, limit: '100' });
      if (this.#sameName) p.set('name', this.#name);
      const { history: hist } = await api('GET', `matrices/${this.#id}/cells/${this.#cell}/history?${p}`);
      if (ask !== this.#asked || this.#stopped) return;
      this.#draw(hist);
    } catch (err) {
      if (ask !== this.#asked || this.#stopped || err.status === 401) return;
      matrixPageFailed(this.#status, this.#content,
        err.status === 404 ? `${err.message}: ` : `Could not load the history: ${err.message}. `, this.#id);
    }
  }

  /** The table's rows as data (the downloads). */
  #rows() {
    return this.#points.map((pt) => ({
      matrix: pt.matrix, name: pt.name, state: pt.state, created_at: pt.created_at, cell: pt.cell,
      metric: this.#metric, n: pt.n, runs: pt.runs, failed: pt.failed, median: pt.stats?.median ?? null,
      min: pt.stats?.min ?? null, q1: pt.stats?.q1 ?? null, q3: pt.stats?.q3 ?? null, max: pt.stats?.max ?? null,
      mean: pt.stats?.mean ?? null, stdev: pt.stats?.stdev ?? null,
    }));
  }

  #draw(hist) {
    const m = METRICS[this.#metric];
    const k = hist.key;
    const params = Object.entries(k.params ?? {}).filter(([, b]) => b !== null).map(([a, b]) => paramText(a, b)).join(' ');
    replace(this.#key, pairText(k), ` · ${k.protocol} ${k.direction}`, params ? [' · ', h('code', {}, params)] : null,
      k.link ? h('span', { class: 'muted' }, ` over ${k.link}`) : null);
    this.#points = hist.points;
    this.#status.hidden = true;
    this.#content.hidden = false;
    this.#note.hidden = !hist.truncated;
    this.#note.textContent = `The newest ${hist.points.length} matrices with this cell are shown (${hist.scanned} looked at); older ones were left out.`;
    replace(this.#body, hist.points.map((pt) => {
      const s = pt.stats ?? {};
      const here = pt.matrix === this.#id;
      return h('tr', { dataset: { matrix: String(pt.matrix), cell: String(pt.cell) }, class: here ? 'cell-focus' : null },
        h('td', { 'data-label': 'matrix' }, h('a', { href: `#/matrices/${pt.matrix}` }, pt.name), ' ',
          h('span', { class: 'muted' }, `#${pt.matrix}`)),
        h('td', { 'data-label': 'state' }, statePill(pt.state)),
        h('td', { 'data-label': 'created' }, pt.created_at ? absolute(pt.created_at) : '—'),
        h('td', { 'data-label': 'n', class: 'num n' }, `${pt.n}`, pt.runs !== pt.n ? h('span', { class: 'muted' }, ` of ${pt.runs}`) : null),
        ...['median', 'min', 'q1', 'q3', 'max'].map((f) => h('td', { 'data-label': f, class: `num ${f}` }, m.text(s[f]))),
        h('td', { 'data-label': 'grid' }, h('a', { href: `#/matrices/${pt.matrix}?cell=${pt.cell}`, class: 'grid-as-of' },
          `grid as of #${pt.matrix}`)));
    }));
    this.#plot(hist);
  }

  async #plot(hist) {
    const echarts = await loadECharts();
    if (!echarts || this.#stopped) return;
    const m = METRICS[this.#metric];
    const c = chartColours();
    const dark = window.matchMedia?.('(prefers-color-scheme: dark)').matches;
    const v = (x) => (typeof x === 'number' ? x * m.scale : null);
    const withData = hist.points.filter((pt) => pt.stats);
    const cats = withData.map((pt) => `#${pt.matrix}`);
    const boxes = withData.map((pt) => boxData(pt.stats, m.scale) ?? []);
    const dots = withData.flatMap((pt, i) => (Array.isArray(pt.stats.values) ? pt.stats.values.map((x) => [i, v(x)]) : []));
    const axis = { axisLine: { lineStyle: { color: c.muted } }, axisLabel: { color: c.muted }, nameTextStyle: { color: c.muted } };
    this.#option = {
      backgroundColor: 'transparent',
      animation: false,
      title: { text: `${m.label} (${m.unit}) per matrix`, left: 0, top: 0, textStyle: { fontSize: 12, fontWeight: 'normal', color: c.fg } },
      legend: { top: 18, left: 0, type: 'scroll', textStyle: { fontSize: 11, color: c.fg } },
      tooltip: { trigger: 'item' },
      grid: { left: 52, right: 16, top: 52, bottom: 28 },
      xAxis: { type: 'category', data: cats, ...axis },
      yAxis: { type: 'value', scale: true, splitLine: { lineStyle: { color: c.line } }, ...axis },
      series: [
        { name: 'spread', type: 'boxplot', data: boxes, itemStyle: { borderColor: '#1f5fbf', color: dark ? '#1d2a44' : '#e6f0ff' } },
        { name: 'median', type: 'line', data: boxes.map((b) => b[2] ?? null), symbolSize: 6, lineStyle: { width: 2 } },
        dots.length ? { name: 'runs', type: 'scatter', data: dots, symbolSize: 5, itemStyle: { opacity: 0.6 } } : null,
      ].filter(Boolean),
    };
    this.#chartEl.setAttribute('aria-label', `${m.label} of cell ${this.#cell} in ${withData.length} matrices`);
    if (!this.#chart) ({ chart: this.#chart, observer: this.#observer } = sizedChart(echarts, this.#chartEl));
    this.#chart.setOption(this.#option, { notMerge: true });
    this.#chartEl.dataset.points = String(withData.length);
  }
}
