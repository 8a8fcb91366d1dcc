// runsamples.mjs - CPU and memory of the hosts of one run, sampled once a
// second beside iperf3's intervals (issue 20 item 1), drawn with ECharts
// like charts.mjs's IntervalChart (its loading and sizing), one chart per
// host, each following its box's width.
//
// A sample is what server/run_sample.c makes of two readings a second apart
// (tb_sample_delta): {cpu: [{user, system, interrupt, softirq, idle} in % per
// core], busiest: core, mem: {total_kib, available_kib, used_pct}}.  Each
// arrives as a `run.sample` event whose data is {run, side, host, sample}
// and whose `at` is when testbedd read it (the same clock as the run's
// started_ms), so that the points line up with the intervals' seconds.
//
// Per host: busy % (100 - idle) of each core, the busiest core (highest mean
// so far) drawn thick and named in the legend, interrupt + softirq of that
// core dashed, and memory used % on the right axis.  Drawing is coalesced to
// one per animation frame; samples may come twice (history then live tail):
// they are keyed by host and their number n (by second when they have none).
//
// t = 0 is the run's started_ms until setStart moves it: a run with latency
// runs its idle probe (2-3 s) before iperf3 starts, so the run page moves it
// to the start of the loaded latency stream, which starts with iperf3, and
// the samples line up with iperf3's intervals (they were drawn 2-3 s late).
//
// Use (the run page):
//   const samples = new RunSamplesChart(run.started_ms, `run ${run.id}`);
//   page.append(samples.el);
//   for (const ev of history) samples.add(ev.data.host, ev.data.side, Date.parse(ev.at), ev.data.sample, ev.data.n);
//   samples.setStart(loadStartMs) once the loaded latency stream's start is known;
//   live.addEventListener('run.sample', (e) => ...same add...);
//   samples.dispose() when the page goes.

import { h } from './dom.mjs';
import { chartExportBar, chartLibrary, sizedChart } from './charts.mjs';

const round1 = (x) => Math.round(x * 10) / 10;

/**
 * The series of one host's samples ([{t: s since the start, sample}], in
 * any order) -> {cores: [[t, busy%]...] per core, busiest, irq: [[t, %]],
 * mem: [[t, used%]]}.  Pure: no DOM.
 */
export function sampleSeries(points) {
  const sorted = [...points].sort((a, b) => a.t - b.t);
  const ncpu = Math.max(0, ...sorted.map((p) => p.sample?.cpu?.length ?? 0));
  const cores = Array.from({ length: ncpu }, () => []);
  const sums = new Array(ncpu).fill(0);
  const mem = [];
  for (const { t, sample } of sorted) {
    (sample.cpu ?? []).forEach((c, i) => {
      const busy = round1(100 - (c.idle ?? 100));
      cores[i].push([t, busy]);
      sums[i] += busy;
    });
    if (sample.mem?.used_pct != null) mem.push([t, sample.mem.used_pct]);
  }
  let busiest = 0;
  sums.forEach((s, i) => { if (s > sums[busiest]) busiest = i; });
  const irq = sorted.filter((p) => p.sample.cpu?.[busiest])
    .map(({ t, sample }) => [t, round1((sample.cpu[busiest].interrupt ?? 0) + (sample.cpu[busiest].softirq ?? 0))]);
  return { cores, busiest, irq, mem };
}

export class RunSamplesChart {
  #startMs;
  #label;
  #hosts = new Map();   // host -> {side, points: Map(n or 's'+second -> {atMs, sample}), chart, observer, option, box}
  #frame = 0;

  /** startMs: the run's started_ms (t = 0 of the interval chart); label names the run. */
  constructor(startMs, label, file = 'run-samples') {
    this.#startMs = startMs;
    this.#label = label;
    this.el = h('div', { class: 'run-samples' });
    this.note = h('p', { class: 'help chart-note', hidden: true });
    this.downloads = chartExportBar(file, () => [...this.#hosts.values()].filter((x) => x.chart)
      .map((x) => ({ chart: x.chart, option: x.option })));
    this.downloads.hidden = true;
    this.el.append(this.note, this.downloads);
  }

  /** One sample of host (side 'client', 'server' or 'router'), read at atMs (ms since the epoch), its number n. */
  add(host, side, atMs, sample, n) {
    if (!sample?.cpu?.length) return;
    let x = this.#hosts.get(host);
    if (!x) {
      const box = h('div', { class: 'chart chart-samples', role: 'img', 'aria-label': `${this.#label}: CPU and memory of ${host}` });
      x = { side, points: new Map(), chart: null, observer: null, option: null, box };
      this.#hosts.set(host, x);
      this.el.append(h('h4', {}, `${host} (${side})`), box);
    }
    x.points.set(Number.isInteger(n) ? n : `s${Math.round(atMs / 1000)}`, { atMs, sample });
    this.#schedule();
  }

  /** t = 0 at startMs (ms since the epoch) from now on: every point is drawn again. */
  setStart(startMs) {
    if (!Number.isFinite(startMs) || startMs === this.#startMs) return;
    this.#startMs = startMs;
    if (this.#hosts.size) this.#schedule();
  }

  /** The start t = 0 is counted from (ms since the epoch). */
  get start() { return this.#startMs; }

  /** How many samples are held, all hosts together. */
  get points() { return [...this.#hosts.values()].reduce((n, x) => n + x.points.size, 0); }

  dispose() {
    cancelAnimationFrame(this.#frame);
    for (const x of this.#hosts.values()) {
      x.observer?.disconnect();
      x.chart?.dispose();
    }
    this.#hosts.clear();
  }

  #schedule() {
    if (this.#frame) return;
    this.#frame = requestAnimationFrame(() => { this.#frame = 0; this.#draw(); });
  }

  async #draw() {
    const echarts = await chartLibrary(this.note);
    if (!echarts || !this.el.isConnected) return;
    for (const [host, x] of this.#hosts) {
      if (!x.chart) Object.assign(x, sizedChart(echarts, x.box));
      // samples before iperf3 started (the idle probe) have t < 0: drawn left of the axis' 0
      const pts = [...x.points.values()].map(({ atMs, sample }) => ({ t: round1((atMs - this.#startMs) / 1000), sample }));
      x.option = option(host, sampleSeries(pts));
      x.chart.setOption(x.option, { notMerge: true });
    }
    this.downloads.hidden = this.#hosts.size === 0;
  }
}

function option(host, s) {
  const series = s.cores.map((data, i) => ({
    name: i === s.busiest ? `cpu${i} (busiest)` : `cpu${i}`,
    type: 'line', showSymbol: false, data,
    lineStyle: { width: i === s.busiest ? 3 : 1 }, z: i === s.busiest ? 3 : 2,
  }));
  series.push({ name: `cpu${s.busiest} interrupt + softirq`, type: 'line', showSymbol: false, data: s.irq, lineStyle: { type: 'dashed' } });
  if (s.mem.length) series.push({ name: 'memory used', type: 'line', yAxisIndex: 1, showSymbol: false, data: s.mem });
  return {
    animation: false,
    title: { text: `${host}: CPU busy per core, memory`, textStyle: { fontSize: 13 } },
    tooltip: { trigger: 'axis', valueFormatter: (v) => `${v} %` },
    legend: { type: 'scroll', bottom: 0 },
    grid: { left: 48, right: 56, top: 36, bottom: 48 },
    xAxis: { type: 'value', name: 's', min: (v) => Math.min(0, Math.floor(v.min)) },
    yAxis: [{ type: 'value', name: 'CPU %', min: 0, max: 100 }, { type: 'value', name: 'memory %', min: 0, max: 100 }],
    series,
  };
}
