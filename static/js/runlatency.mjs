// runlatency.mjs - the RTT beside one run (issue 20 item 7: latency under
// load, the bufferbloat view of Flent's RRUL), drawn with ECharts like
// runsamples.mjs (its loading and sizing): the RTT of each second of the
// stream under load (median, and the min..max of the second), against the
// idle median measured before the load (a dashed line).  x is in seconds
// since the loaded stream began, which testbedd starts right before
// iperf3's client (after the idle probe), each second drawn at its end like
// iperf3's intervals: the points line up with the interval chart's.
//
// A bin is what server/irtt_parse.c makes of a second of irtt's (or ping's)
// packets: {t, n, lost, min, median, max} (ms).  Each arrives in a `run.rtt`
// event whose data is {run, host, server, tool, phase: idle|load, at_ms,
// bin} (at_ms: when the second began on testbedd's clock), or from GET
// /runs/{id}/latency (bins with at_ms, and the summary).  Bins may come twice
// (history then live tail): they are keyed by phase and t.
//
// Use (the run page):
//   const lat = new RunLatencyChart(`run ${run.id}`);
//   box.append(lat.el);
//   lat.add(phase, bin, tool);               // each bin, either way
//   lat.summary(reply.summary, reply.tool);  // the API's, once the run ended
//   lat.dispose() when the page goes.

import { h } from './dom.mjs';
import { chartExportBar, chartLibrary, sizedChart } from './charts.mjs';

const ms = (x) => (x == null ? '—' : `${x < 10 ? Math.round(x * 100) / 100 : Math.round(x * 10) / 10} ms`);

/** The median of numbers (null when none). */
function median(xs) {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/**
 * Load bins ([{t: s since the start, bin}]) and idle bins -> {median: [[t,
 * ms]], band: [[t, min, max]], lost: n, idle: the idle bins' median of
 * medians (or null)}.  Pure: no DOM.
 */
export function latencySeries(load, idle) {
  const sorted = [...load].sort((a, b) => a.t - b.t);
  const got = sorted.filter((p) => p.bin.n > 0);
  return {
    median: got.map((p) => [p.t, p.bin.median]),
    min: got.map((p) => [p.t, p.bin.min]),
    max: got.map((p) => [p.t, p.bin.max]),
    lost: sorted.reduce((n, p) => n + (p.bin.lost ?? 0), 0),
    idle: median(idle.filter((b) => b.n > 0).map((b) => b.median)),
  };
}

export class RunLatencyChart {
  #label;
  #load = new Map();   // t -> {t, bin}
  #idle = new Map();   // t -> bin
  #tool = null;
  #chart = null;
  #option = null;
  #observer = null;
  #frame = 0;

  /** label names the run; file: the downloads' name. */
  constructor(label, file = 'run-latency') {
    this.#label = label;
    this.box = h('div', { class: 'chart chart-latency', role: 'img', 'aria-label': `${label}: round-trip time under load` });
    this.note = h('p', { class: 'help chart-note', hidden: true });
    this.facts = h('p', { class: 'latency-summary' });
    this.downloads = chartExportBar(file, () => (this.#chart ? [{ chart: this.#chart, option: this.#option }] : []));
    this.el = h('div', { class: 'run-latency' }, this.note, this.box, this.facts, this.downloads);
  }

  /** One bin of phase ('idle' or 'load'): a load bin drawn at its end (t + 1 s). */
  add(phase, bin, tool) {
    if (!bin) return;
    if (tool) this.#tool = tool;
    if (phase === 'idle') this.#idle.set(bin.t, bin);
    else this.#load.set(bin.t, { t: Math.round((bin.t + 1) * 10) / 10, bin });
    this.#schedule();
  }

  /** The API's summary ({idle, load, median_ratio}) under the chart. */
  summary(s, tool) {
    if (!s) return;
    if (tool) this.#tool = tool;
    const ratio = s.median_ratio != null ? ` — ${s.median_ratio}× the idle median` : '';
    this.facts.textContent = `${this.#tool ?? 'RTT'}: idle median ${ms(s.idle?.median)} (p95 ${ms(s.idle?.p95)}, ${s.idle?.n ?? 0} packets); `
      + `under load median ${ms(s.load?.median)} (p95 ${ms(s.load?.p95)}, ${s.load?.n ?? 0} packets, ${s.load?.lost ?? 0} lost)${ratio}`;
    this.facts.dataset.ratio = s.median_ratio ?? '';
  }

  /** Load bins held. */
  get points() { return this.#load.size; }

  dispose() {
    cancelAnimationFrame(this.#frame);
    this.#observer?.disconnect();
    this.#chart?.dispose();
    this.#chart = null;
  }

  #schedule() {
    if (this.#frame) return;
    this.#frame = requestAnimationFrame(() => { this.#frame = 0; this.#draw(); });
  }

  async #draw() {
    const echarts = await chartLibrary(this.note);
    if (!echarts || !this.el.isConnected) return;
    if (!this.#chart) {
      const made = sizedChart(echarts, this.box);
      this.#chart = made.chart;
      this.#observer = made.observer;
    }
    this.#option = option(this.#label, this.#tool, latencySeries([...this.#load.values()], [...this.#idle.values()]));
    this.#chart.setOption(this.#option, { notMerge: true });
  }
}

function option(label, tool, s) {
  const series = [
    { name: 'median RTT under load', type: 'line', showSymbol: false, data: s.median, lineStyle: { width: 2 }, z: 3 },
    { name: 'min', type: 'line', showSymbol: false, data: s.min, lineStyle: { width: 1, opacity: 0.6 } },
    { name: 'max', type: 'line', showSymbol: false, data: s.max, lineStyle: { width: 1, opacity: 0.6 } },
  ];
  if (s.idle != null) {
    series.push({
      name: 'idle median', type: 'line', showSymbol: false, lineStyle: { type: 'dashed' },
      data: s.median.length ? [[0, s.idle], [Math.max(...s.median.map((p) => p[0])), s.idle]] : [[0, s.idle]],
    });
  }
  return {
    animation: false,
    title: { text: `RTT (${tool ?? 'latency'}) each second${s.lost ? `, ${s.lost} lost` : ''}`, textStyle: { fontSize: 13 } },
    tooltip: { trigger: 'axis', valueFormatter: (v) => ms(v) },
    legend: { type: 'scroll', bottom: 0 },
    grid: { left: 56, right: 24, top: 36, bottom: 48 },
    xAxis: { type: 'value', name: 's', min: 0 },
    // log: the idle RTT (a fraction of a ms on a LAN) and a full queue (tens of ms) both readable
    yAxis: { type: 'log', name: 'ms (log)', logBase: 10 },
    series,
    aria: { enabled: true, label: { description: `${label}: round-trip time under load` } },
  };
}
