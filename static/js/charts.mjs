// charts.mjs - interval charts of one iperf3 run, drawn with Apache ECharts
// (static/vendor/echarts.mjs, installed by deploy/setup from static's
// lockfile; loaded on first use, so the pages work without it).
//
// An IntervalChart holds the intervals of both sides of a run, keyed by
// side and interval number, so that the history (GET /runs/{id}) and the
// live tail (run.interval events) may arrive in any order and overlap:
// an interval seen twice is kept once.  Points are the interval's end time
// in seconds since the test started.  Drawing is coalesced to one per
// animation frame however fast intervals arrive.
//
// A live chart stays cheap to update (issue 20 item 0: the page's main
// thread, not the network, made the live chart's p99): a panel is built
// whole (setOption with notMerge) only when its series, axes or note
// change or the colours switch; a new interval otherwise sets only the
// series' data (ECharts merges it into the chart it has), and the detail
// panel is drawn one animation frame after the bitrate panel, so that no
// frame does both.
//
// Two panels, whose series intervalseries.mjs defines (the live plot of a
// matrix page draws the same ones, liveplot.mjs).
//
// Every chart downloads as PNG and SVG (chartExportBar): the PNG from the
// drawn canvases (getDataURL), the SVG drawn again by ECharts' SVG renderer
// from the same options; a chart of several panels gives one image of them
// stacked.

import { h } from './dom.mjs';
import { download } from './export.mjs';
import { detailNone, detailTitle, intervalSeries } from './intervalseries.mjs';

let lib = null;

/** The ECharts module, or null when it is not installed (deploy/setup installs it). */
export function loadECharts() {
  lib ??= import('../vendor/echarts.mjs').catch((err) => {
    console.warn('testbedd: the chart library is not installed (run deploy/setup):', err.message);
    return null;
  });
  return lib;
}

/**
 * The ECharts module, or null after saying in note (a hidden <p>) that the
 * chart library is missing.
 */
export async function chartLibrary(note) {
  const echarts = await loadECharts();
  if (!echarts) {
    note.hidden = false;
    note.textContent = 'Charts need the chart library: run deploy/setup on the testbedd host.';
  }
  return echarts;
}

const dark = () => window.matchMedia?.('(prefers-color-scheme: dark)').matches;

/**
 * One chart on el in the page's colour scheme that follows el's size:
 * {chart, observer}; the caller disconnects the observer when it disposes
 * of the chart.
 */
export function sizedChart(echarts, el) {
  const chart = echarts.init(el, dark() ? 'dark' : null, { renderer: 'canvas' });
  const observer = new ResizeObserver(() => { if (!chart.isDisposed()) chart.resize(); });
  observer.observe(el);
  return { chart, observer };
}

export class IntervalChart {
  #protocol;
  #sides = { client: new Map(), server: new Map() };   // n -> interval
  #charts = [];
  #frame = 0;
  #observer = null;
  #scheme = null;
  #media = null;         // prefers-color-scheme, followed while the chart is shown
  #options = [];         // what each panel was last drawn from (the SVG export draws it again)
  #shape = ['', ''];     // each panel's series names, axes and note when last built whole
  #detailFrame = 0;      // the detail panel's frame, one after the bitrate panel's
  #lastDraw = -1e9;      // performance.now() of the last draw

  /** protocol 'tcp' or 'udp'; label names the run (for screen readers); file: the downloads' name. */
  constructor(protocol, label, file = 'run-intervals') {
    this.#protocol = protocol;
    this.rate = h('div', { class: 'chart chart-rate', role: 'img', 'aria-label': `${label}: bitrate per interval` });
    this.detail = h('div', {
      class: 'chart chart-detail', role: 'img',
      'aria-label': `${label}: ${protocol === 'udp' ? 'jitter and loss' : 'retransmits, cwnd and RTT'} per interval`,
    });
    this.note = h('p', { class: 'help chart-note', hidden: true });
    this.downloads = chartExportBar(file, () => this.#charts.map((chart, i) => ({ chart, option: this.#options[i] })));
    this.downloads.hidden = true;
    this.el = h('div', { class: 'interval-chart', dataset: { points: '0', drawn: '0' } },
      this.rate, this.detail, this.note, this.downloads);
  }

  /** Take interval number n of side ('client' or 'server'); any order, duplicates ignored. */
  add(side, n, interval) {
    const m = this.#sides[side];
    if (!m || !interval || m.has(n)) return;
    m.set(n, interval);
    this.el.dataset.points = String(this.#sides.client.size + this.#sides.server.size);
    this.#schedule();
  }

  /** Take a run's intervals ({client: [...], server: [...]}, each in order). */
  addAll(intervals) {
    for (const side of ['client', 'server']) (intervals?.[side] ?? []).forEach((iv, n) => this.add(side, n, iv));
  }

  get points() { return this.#sides.client.size + this.#sides.server.size; }

  /** Stop drawing and free the charts. */
  dispose() {
    if (this.#frame > 0) cancelAnimationFrame(this.#frame);
    this.#frame = 0;
    cancelAnimationFrame(this.#detailFrame);
    this.#detailFrame = 0;
    this.#observer?.disconnect();
    this.#media?.removeEventListener('change', this.#redraw);
    for (const c of this.#charts) c.dispose();
    this.#charts = [];
  }

  #redraw = () => this.#schedule();

  // Draw at the end of this task when nothing was drawn in the last frame
  // (a live interval then reaches the screen with the next frame, not the
  // one after), else in the next animation frame: one draw a frame at most.
  #schedule() {
    if (this.#frame) return;
    if (performance.now() - this.#lastDraw >= 17) {
      this.#frame = -1;
      queueMicrotask(() => {
        if (this.#frame !== -1) return;
        this.#frame = 0;
        this.#lastDraw = performance.now();
        this.#draw();
      });
      return;
    }
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.#lastDraw = performance.now();
      this.#draw();
    });
  }

  async #draw() {
    const echarts = await chartLibrary(this.note);
    if (!echarts || !this.el.isConnected) return;
    const scheme = dark() ? 'dark' : 'light';
    if (this.#charts.length === 0 || scheme !== this.#scheme) {
      for (const c of this.#charts) c.dispose();
      this.#scheme = scheme;
      this.#charts = [this.rate, this.detail].map((el) => echarts.init(el, scheme === 'dark' ? 'dark' : null,
        { renderer: 'canvas' }));
      this.#shape = ['', ''];
      this.#observer ??= new ResizeObserver(() => { for (const c of this.#charts) c.resize(); });
      this.#observer.observe(this.el);
      // a switch to dark (or back) redraws an ended run's chart too
      if (!this.#media && window.matchMedia) {
        this.#media = window.matchMedia('(prefers-color-scheme: dark)');
        this.#media.addEventListener('change', this.#redraw);
      }
    }
    this.el.dataset.scheme = scheme;
    this.el.dataset.fg = colours().fg;
    const s = this.#series();
    this.#options[0] = panel('bitrate (Gbit/s)', s.rate, [{ name: '' }]);
    this.#apply(0, this.#options[0]);
    const detail = panel(detailTitle(this.#protocol), s.detail, s.axes);
    // iperf3 before 3.17 gives the client's intervals only when it ends
    if (s.detail.length === 0) detail.title.subtext = detailNone(this.#protocol);
    this.#options[1] = detail;
    cancelAnimationFrame(this.#detailFrame);
    this.#detailFrame = requestAnimationFrame(() => {
      this.#detailFrame = 0;
      if (this.#charts[1]) this.#apply(1, detail);
    });
    this.downloads.hidden = false;
    this.el.dataset.drawn = String(this.points);
    // When the points reached the screen: ECharts paints in its next animation
    // frame, which runs before this one (tests/bench/chart_delay.mjs listens).
    const counts = { client: this.#sides.client.size, server: this.#sides.server.size };
    requestAnimationFrame(() => this.el.dispatchEvent(new CustomEvent('tb-drawn', {
      bubbles: true, detail: { ...counts, at: performance.timeOrigin + performance.now() },
    })));
  }

  /**
   * Draw option on panel i: whole when its shape (series, axes, note) changed
   * since the last time, else only the series' data, merged.
   */
  #apply(i, option) {
    const shape = JSON.stringify([option.series.map((x) => [x.name, x.type, x.yAxisIndex ?? 0]),
      option.yAxis.map((a) => [a.name, a.position, a.offset]), option.title.subtext ?? '']);
    if (shape !== this.#shape[i]) {
      this.#shape[i] = shape;
      this.#charts[i].setOption(option, { notMerge: true });
      return;
    }
    this.#charts[i].setOption({
      series: option.series.map((x) => ({ name: x.name, data: x.data, showSymbol: x.showSymbol, large: x.large })),
    });
  }

  /** The series of both panels from the intervals held, as ECharts series. */
  #series() {
    const sorted = (side) => [...this.#sides[side].entries()].sort((a, b) => a[0] - b[0]).map(([, iv]) => iv);
    const s = intervalSeries(this.#protocol, { client: sorted('client'), server: sorted('server') });
    return { rate: s.rate.map(echartsSeries), detail: s.detail.map(echartsSeries), axes: s.axes };
  }
}

// ---------------------------------------------------------------- export

/**
 * "Download PNG · SVG" of a chart: panels() gives its ECharts instances
 * with the option each was drawn from ([{chart, option}], top to bottom),
 * saved as one image, name.png or name.svg.
 */
export function chartExportBar(name, panels) {
  const button = (label, fn) => h('button', {
    type: 'button', class: `link export-${label.toLowerCase()}`, 'aria-label': `Download ${name} as ${label}`,
    onclick: async (e) => {
      const b = e.currentTarget;
      b.disabled = true;
      try {
        const list = panels().filter((p) => p.chart && p.option);
        if (list.length) await fn(list);
      } catch (err) {
        console.warn('testbedd: chart export:', err);
      } finally {
        b.disabled = false;
      }
    },
  }, label);
  return h('span', { class: 'downloads chart-downloads' }, 'Download ',
    button('PNG', async (list) => download(`${name}.png`, await stackedPNG(list), 'image/png')), ' · ',
    button('SVG', async (list) => download(`${name}.svg`, await stackedSVG(list), 'image/svg+xml')));
}

const background = () => getComputedStyle(document.documentElement).getPropertyValue('--bg').trim()
  || (dark() ? '#111318' : '#ffffff');

/** The panels' canvases (twice their pixels) one under the other, as a PNG Blob. */
async function stackedPNG(list) {
  const bg = background();
  const images = await Promise.all(list.map((p) => new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => resolve(img);
    img.onerror = () => reject(new Error('a panel did not render'));
    img.src = p.chart.getDataURL({ type: 'png', pixelRatio: 2, backgroundColor: bg });
  })));
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(...images.map((i) => i.naturalWidth));
  canvas.height = images.reduce((sum, i) => sum + i.naturalHeight, 0);
  const g = canvas.getContext('2d');
  g.fillStyle = bg;
  g.fillRect(0, 0, canvas.width, canvas.height);
  let y = 0;
  for (const img of images) {
    g.drawImage(img, 0, y);
    y += img.naturalHeight;
  }
  return new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
}

/** Each panel drawn again by the SVG renderer at its size on the page, stacked in one SVG document. */
async function stackedSVG(list) {
  const echarts = await loadECharts();
  const bg = background();
  const parts = list.map((p) => {
    const width = p.chart.getWidth() || 640;
    const height = p.chart.getHeight() || 240;
    const c = echarts.init(null, dark() ? 'dark' : null, { renderer: 'svg', ssr: true, width, height });
    c.setOption({ ...p.option, animation: false });
    const svg = c.renderToSVGString();
    c.dispose();
    return { svg, width, height };
  });
  const width = Math.max(...parts.map((p) => p.width));
  const height = parts.reduce((sum, p) => sum + p.height, 0);
  let y = 0;
  const body = parts.map((p) => {
    const placed = p.svg.replace(/^<svg\b/, `<svg x="0" y="${y}"`);
    y += p.height;
    return placed;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`
    + `<rect width="100%" height="100%" fill="${bg.replace(/[^#\w(),.% -]/g, '')}"/>${body.join('')}</svg>\n`;
}

/** The page's colours (app.css custom properties), so a chart follows its light and dark. */
export function chartColours() {
  return colours();
}

/** An ECharts series from one of intervalSeries()'s. */
function echartsSeries(x) {
  if (x.kind === 'bar') {
    return { name: x.name, type: 'bar', yAxisIndex: x.axis, barMaxWidth: 8, data: x.points.map(([px, py]) => [px, py]),
      animation: false, large: x.points.length > 400 };
  }
  return {
    name: x.name, type: 'line', yAxisIndex: x.axis, showSymbol: x.points.length < 40, symbolSize: 4, sampling: 'lttb',
    lineStyle: { width: x.thin ? 1 : 2 }, emphasis: { focus: 'series' },
    data: x.points.map(([px, py, omitted]) => ({ value: [px, py], itemStyle: omitted ? { opacity: 0.35 } : undefined })),
    animation: false,
  };
}

/**
 * The page's colours (app.css custom properties), so the charts follow its
 * light and dark: read once per scheme (getComputedStyle at every live point
 * made the browser recompute the page's style before each draw).
 */
const colourCache = new Map();
function colours() {
  const scheme = dark() ? 'dark' : 'light';
  let c = colourCache.get(scheme);
  if (!c) {
    const css = getComputedStyle(document.documentElement);
    const v = (name, dflt) => css.getPropertyValue(name).trim() || dflt;
    c = { fg: v('--fg', '#16181d'), muted: v('--muted', '#5b6270'), line: v('--line', '#d5d9e0') };
    if (css.getPropertyValue('--fg').trim()) colourCache.set(scheme, c); /* not before app.css is in */
  }
  return c;
}

function panel(title, series, yAxes) {
  const c = colours();
  const axis = { axisLine: { lineStyle: { color: c.muted } }, axisLabel: { color: c.muted }, nameTextStyle: { color: c.muted } };
  return {
    backgroundColor: 'transparent',
    // no transitions: a live chart takes a point a second, and ECharts' axis and
    // label animations (300 ms each time the scale moves) kept the page's main
    // thread busy in long tasks that delayed the next interval (tests/bench/page_profile.mjs)
    animation: false,
    title: {
      text: title, left: 0, top: 0, textStyle: { fontSize: 12, fontWeight: 'normal', color: c.fg },
      subtextStyle: { color: c.muted },
    },
    grid: { left: 48, right: yAxes.length > 2 ? 96 : 48, top: 66, bottom: 28 },
    legend: { top: 18, left: 0, type: 'scroll', textStyle: { fontSize: 11, color: c.fg } },
    tooltip: { trigger: 'axis', valueFormatter: (v) => (typeof v === 'number' ? v.toPrecision(4) : '—') },
    xAxis: { type: 'value', name: 's', min: 0, nameGap: 4, splitLine: { show: false }, ...axis },
    yAxis: yAxes.map((a, i) => ({
      type: 'value', name: a.name, position: a.position ?? 'left', offset: a.offset ?? 0, min: 0,
      splitLine: { show: i === 0, lineStyle: { color: c.line } }, alignTicks: i > 0, ...axis,
    })),
    series,
  };
}
