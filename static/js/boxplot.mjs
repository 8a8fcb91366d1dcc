// boxplot.mjs - small box plots of a cell's Stats, drawn with Apache ECharts
// (charts.mjs loads it): per series a box from the first to the third
// quartile (the results' q1 and q3: R type 7), the median as its line,
// whiskers from min to max (a cell has a handful of repeats: no outlier
// fences), and every value drawn as a dot over it.  Horizontal, one row per
// series, so a table row can hold one (the cells table, the OS page).
//
// A MiniBox draws when it first scrolls into view (an IntersectionObserver),
// so a table of hundreds of cells does not start hundreds of charts at once;
// dispose() frees it.  el.dataset: drawn ("1" once drawn), boxes, points.

import { chartColours, loadECharts, sizedChart } from './charts.mjs';
import { h } from './dom.mjs';

const COLOURS = ['#1f5fbf', '#c2571a', '#2e8540', '#8a3ffc'];

/** [min, q1, median, q3, max] of a Stats scaled by scale, or null (no data). */
export function boxData(stats, scale = 1) {
  if (!stats || typeof stats.median !== 'number') return null;
  const v = (x, d) => (typeof x === 'number' ? x * scale : d * scale);
  return [v(stats.min, stats.median), v(stats.q1, stats.median), v(stats.median, 0), v(stats.q3, stats.median),
    v(stats.max, stats.median)];
}

/** The value range over items' Stats (min and max, unscaled): a shared axis for several plots. */
export function rangeOf(statsList) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of statsList) {
    for (const x of [s?.min, s?.max, ...(Array.isArray(s?.values) ? s.values : [])]) {
      if (typeof x === 'number') { lo = Math.min(lo, x); hi = Math.max(hi, x); }
    }
  }
  return Number.isFinite(lo) ? [lo, hi] : null;
}

/**
 * The ECharts option of items ([{name, stats}]): scale multiplies the
 * values (1e-9: Gbit/s), unit names them, range ([lo, hi] unscaled) fixes
 * the axis so that plots side by side compare.
 */
export function boxOption(items, { scale = 1, unit = '', range = null, axisLabels = true } = {}) {
  const c = chartColours();
  const names = items.map((it) => it.name);
  const boxes = items.map((it, i) => ({ value: boxData(it.stats, scale) ?? [], itemStyle: { borderColor: COLOURS[i % COLOURS.length] } }));
  const dots = items.flatMap((it, i) => (Array.isArray(it.stats?.values) ? it.stats.values : [])
    .filter((x) => typeof x === 'number').map((x) => ({ value: [x * scale, i], itemStyle: { color: COLOURS[i % COLOURS.length] } })));
  let [lo, hi] = range ?? [null, null];
  if (lo !== null) {
    const pad = (hi - lo) * 0.06 || Math.abs(hi) * 0.05 || 1;
    lo = (lo - pad) * scale;
    hi = (hi + pad) * scale;
    if (lo < 0 && range[0] >= 0) lo = 0;
  }
  const axis = { axisLine: { lineStyle: { color: c.muted } }, axisLabel: { color: c.muted, fontSize: 10 } };
  return {
    backgroundColor: 'transparent',
    animation: false,
    grid: { left: axisLabels ? 44 : 6, right: 8, top: 4, bottom: 18 },
    tooltip: {
      trigger: 'item',
      formatter: (p) => (p.seriesType === 'boxplot'
        ? `${p.name}: median ${fmt(p.value[3])} ${unit}, IQR ${fmt(p.value[2])}–${fmt(p.value[4])}, min ${fmt(p.value[1])}, max ${fmt(p.value[5])}`
        : `${names[p.value[1]]}: ${fmt(p.value[0])} ${unit}`),
    },
    // the padded ends are no round numbers: no labels there
    xAxis: { type: 'value', min: lo ?? undefined, max: hi ?? undefined, scale: lo === null, splitNumber: 3,
      splitLine: { lineStyle: { color: c.line } }, ...axis, axisLabel: { ...axis.axisLabel, showMinLabel: false, showMaxLabel: false } },
    yAxis: { type: 'category', data: names, inverse: true, ...axis, axisLabel: { ...axis.axisLabel, show: axisLabels } },
    series: [
      { name: 'spread', type: 'boxplot', data: boxes, boxWidth: [6, 12], itemStyle: { color: 'transparent', borderWidth: 1.5 } },
      { name: 'runs', type: 'scatter', data: dots, symbolSize: 5, z: 3, itemStyle: { opacity: 0.75 } },
    ],
  };
}

function fmt(x) {
  if (typeof x !== 'number') return '—';
  const a = Math.abs(x);
  return a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : a >= 1 ? x.toFixed(2) : x.toPrecision(3);
}

let seen = null;                  // the IntersectionObserver all MiniBoxes share
const pending = new WeakMap();    // el -> its MiniBox, until seen

function observe(box) {
  if (typeof IntersectionObserver === 'undefined') { box.show(); return; }
  seen ??= new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (!e.isIntersecting) continue;
      seen.unobserve(e.target);
      pending.get(e.target)?.show();
      pending.delete(e.target);
    }
  }, { rootMargin: '200px' });
  pending.set(box.el, box);
  seen.observe(box.el);
}

export class MiniBox {
  #chart = null;
  #option = null;
  #resize = null;
  #gone = false;

  /** label: what it shows (for screen readers). */
  constructor(label) {
    this.el = h('div', { class: 'boxplot', role: 'img', 'aria-label': label, dataset: { drawn: '0' } });
  }

  /** Draw items ([{name, stats}]) with opts as boxOption's, when the plot is in view. */
  draw(items, opts) {
    this.#option = boxOption(items, opts);
    this.el.style.height = `${items.length * 20 + 26}px`;
    this.el.dataset.boxes = String(items.filter((it) => boxData(it.stats)).length);
    this.el.dataset.points = String(items.reduce((n, it) => n + (it.stats?.values?.length ?? 0), 0));
    if (this.#chart) this.#chart.setOption(this.#option, { notMerge: true });
    else observe(this);
    return this;
  }

  async show() {
    const echarts = await loadECharts();
    if (!echarts || this.#gone || this.#chart || !this.el.isConnected) return;
    ({ chart: this.#chart, observer: this.#resize } = sizedChart(echarts, this.el));
    this.#chart.setOption(this.#option, { notMerge: true });
    this.el.dataset.drawn = '1';
  }

  /** The chart and the option it was drawn from (chart downloads), or null. */
  get panel() { return this.#chart ? { chart: this.#chart, option: this.#option } : null; }

  dispose() {
    this.#gone = true;
    seen?.unobserve(this.el);
    this.#resize?.disconnect();
    this.#chart?.dispose();
    this.#chart = null;
  }
}
