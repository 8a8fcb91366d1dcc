// liveplot.mjs - the live plot of a run in progress: its two panels (the
// series of intervalseries.mjs) drawn straight on 2D canvases, a few
// milliseconds a point, by a worker on OffscreenCanvases (liveworker.mjs)
// or, where a browser has none, on the page (livecharts.mjs).
//
// Why not ECharts, which draws every other chart (issue 20 item 0): a live
// point must reach the screen within 50 ms of iperf3 writing it (p99), and
// ECharts' setOption of a panel took 15-55 ms of the page's main thread a
// point in software rendering, behind whatever else the page did then (box
// plots, a table's JSON).  The live plot draws lines, bars, axes and a
// legend, no more; the run page (#/runs/ID) has the full chart with
// tooltips and downloads.
//
// Pure: no DOM, so a worker may import it.  A canvas here is an
// HTMLCanvasElement or an OffscreenCanvas (both have width, height and
// getContext('2d')).

import { detailNone, detailTitle, intervalSeries } from './intervalseries.mjs';

// ECharts' own palettes (light, dark), so a live plot and the run page's chart colour a series alike
const PALETTES = {
  light: ['#5470c6', '#91cc75', '#fac858', '#ee6666', '#73c0de', '#3ba272', '#fc8452', '#9a60b4', '#ea7ccc'],
  dark: ['#4992ff', '#7cffb2', '#fddd60', '#ff6e76', '#58d9f9', '#05c091', '#ff8a45', '#8d48e3', '#dd79ff'],
};
const FONT = 'system-ui, sans-serif';

/**
 * One run's live plot: its intervals (each kept once, any order) and its
 * two canvases.  style: {scheme: 'light'|'dark', fg, muted, line}; size:
 * {width, height: [rate, detail] in CSS pixels, ratio: devicePixelRatio}.
 */
export class LiveRun {
  #sides = { client: new Map(), server: new Map() };
  #drawn = ['', ''];     // what each panel was last drawn from (its series' names and lengths, size, style)

  constructor(protocol, canvases) {
    this.protocol = protocol;
    this.canvases = canvases;     // [rate, detail]
    this.size = null;
    this.style = null;
  }

  /** Draw on canvases ([rate, detail]) from now on, whole at the next draw(). */
  attach(canvases) {
    this.canvases = canvases;
    this.#drawn = ['', ''];
  }

  /** Take interval n of side; false when it was held already (or is not one). */
  add(side, n, interval) {
    const m = this.#sides[side];
    if (!m || !interval || m.has(n)) return false;
    m.set(n, interval);
    return true;
  }

  /** Every interval held, as [side, n, interval]. */
  entries() {
    return ['client', 'server'].flatMap((side) => [...this.#sides[side]].map(([n, iv]) => [side, n, iv]));
  }

  get counts() { return { client: this.#sides.client.size, server: this.#sides.server.size }; }

  /** Draw both panels (nothing before a size and a style are known). */
  draw() {
    if (!this.size || !this.style || !this.canvases) return false;
    const sorted = (side) => [...this.#sides[side].entries()].sort((a, b) => a[0] - b[0]).map(([, iv]) => iv);
    const s = intervalSeries(this.protocol, { client: sorted('client'), server: sorted('server') });
    const panels = [
      { title: 'bitrate (Gbit/s)', series: s.rate, axes: [{ name: '' }], note: s.rate.length ? '' : 'Waiting for the first interval…' },
      { title: detailTitle(this.protocol), series: s.detail, axes: s.axes, note: s.detail.length ? '' : detailNone(this.protocol) },
    ];
    // a panel whose series, size and colours are as last drawn is left as it is (a receiver's
    // interval changes the bitrate panel only): half the drawing of most points
    panels.forEach((p, i) => {
      const mark = JSON.stringify([p.series.map((x) => [x.name, x.points.length]), p.note, this.size.width,
        this.size.height[i], this.size.ratio, this.style]);
      if (mark === this.#drawn[i]) return;
      this.#drawn[i] = mark;
      drawPanel(this.canvases[i], this.size.width, this.size.height[i], this.size.ratio, p, this.style);
    });
    return true;
  }
}

/** Panel p ({title, series, axes, note}) on canvas, width x height CSS pixels at ratio device pixels each. */
export function drawPanel(canvas, width, height, ratio, p, style) {
  const w = Math.max(1, Math.round(width * ratio));
  const hgt = Math.max(1, Math.round(height * ratio));
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== hgt) canvas.height = hgt;
  const g = canvas.getContext('2d');
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, width, height);
  const palette = PALETTES[style.scheme] ?? PALETTES.light;
  const colour = (i) => palette[i % palette.length];
  const grid = { left: 48, right: p.axes.length > 2 ? 96 : 48, top: 58, bottom: 28 };
  const plot = { x: grid.left, y: grid.top, w: Math.max(10, width - grid.left - grid.right), h: Math.max(10, height - grid.top - grid.bottom) };

  g.textBaseline = 'top';
  g.fillStyle = style.fg;
  g.font = `12px ${FONT}`;
  g.fillText(p.title, 0, 0);
  if (p.note) {
    g.fillStyle = style.muted;
    g.fillText(p.note, 0, 18);
  }
  if (p.series.length === 0) return;
  legend(g, p.series, colour, style, width);

  const xmax = niceMax(Math.max(0, ...p.series.flatMap((x) => x.points.map(([px]) => px))));
  const ys = p.axes.map((_, a) => niceMax(Math.max(0, ...p.series.filter((x) => x.axis === a)
    .flatMap((x) => x.points.map(([, py]) => (typeof py === 'number' ? py : 0))))));
  const X = (v) => plot.x + (v / xmax) * plot.w;
  const Y = (a, v) => plot.y + plot.h - (v / ys[a]) * plot.h;
  axes(g, p.axes, ys, xmax, plot, X, style);

  g.save();
  g.beginPath();
  g.rect(plot.x, plot.y - 2, plot.w + 2, plot.h + 4);
  g.clip();
  p.series.forEach((x, i) => {
    if (x.kind === 'bar') bars(g, x, X, (v) => Y(x.axis, v), plot, xmax, colour(i));
    else line(g, x, X, (v) => Y(x.axis, v), colour(i));
  });
  g.restore();
}

function legend(g, series, colour, style, width) {
  g.font = `11px ${FONT}`;
  g.textBaseline = 'middle';
  let x = 0;
  series.forEach((s, i) => {
    const wText = g.measureText(s.name).width;
    if (x + 18 + wText > width) return;   // no room: the run page's chart has them all
    g.fillStyle = colour(i);
    g.fillRect(x, 36, 14, s.kind === 'bar' ? 8 : 3);
    g.fillStyle = style.fg;
    g.fillText(s.name, x + 18, 38);
    x += 18 + wText + 12;
  });
}

function axes(g, list, ys, xmax, plot, X, style) {
  g.font = `10px ${FONT}`;
  g.strokeStyle = style.line;
  g.lineWidth = 1;
  g.fillStyle = style.muted;
  // split lines and labels of the first y axis, labels of the others on the right
  list.forEach((a, i) => {
    const right = a.position === 'right';
    const edge = right ? plot.x + plot.w + (a.offset ?? 0) : plot.x;
    g.textAlign = right ? 'left' : 'right';
    g.textBaseline = 'middle';
    for (const v of ticks(ys[i])) {
      const y = plot.y + plot.h - (v / ys[i]) * plot.h;
      if (i === 0) {
        g.beginPath();
        g.moveTo(plot.x, Math.round(y) + 0.5);
        g.lineTo(plot.x + plot.w, Math.round(y) + 0.5);
        g.stroke();
      }
      g.fillText(label(v), right ? edge + 6 : edge - 6, y);
    }
    if (a.name) {
      g.textBaseline = 'bottom';
      g.fillText(a.name, right ? edge + 6 : edge - 6, plot.y - 8);
    }
  });
  g.strokeStyle = style.muted;
  g.beginPath();
  g.moveTo(plot.x, plot.y + plot.h + 0.5);
  g.lineTo(plot.x + plot.w, plot.y + plot.h + 0.5);
  g.stroke();
  g.textAlign = 'center';
  g.textBaseline = 'top';
  for (const v of ticks(xmax)) g.fillText(label(v), X(v), plot.y + plot.h + 6);
  g.textAlign = 'left';
  g.fillText('s', plot.x + plot.w + 6, plot.y + plot.h + 6);
}

function line(g, s, X, Y, colour) {
  g.strokeStyle = colour;
  g.lineWidth = s.thin ? 1 : 2;
  g.lineJoin = 'round';
  g.beginPath();
  let pen = false;
  for (const [x, y] of s.points) {
    if (typeof y !== 'number' || typeof x !== 'number') { pen = false; continue; }
    if (pen) g.lineTo(X(x), Y(y));
    else g.moveTo(X(x), Y(y));
    pen = true;
  }
  g.stroke();
  if (s.points.length >= 40) return;
  g.fillStyle = colour;
  for (const [x, y, omitted] of s.points) {
    if (typeof y !== 'number') continue;
    g.globalAlpha = omitted ? 0.35 : 1;
    g.beginPath();
    g.arc(X(x), Y(y), 2, 0, 2 * Math.PI);
    g.fill();
  }
  g.globalAlpha = 1;
}

function bars(g, s, X, Y, plot, xmax, colour) {
  const n = Math.max(1, s.points.length);
  const bw = Math.max(1, Math.min(8, (plot.w / Math.max(n, xmax)) * 0.6));
  g.fillStyle = colour;
  for (const [x, y] of s.points) {
    if (typeof y !== 'number' || y <= 0) continue;
    const top = Y(y);
    g.fillRect(X(x) - bw / 2, top, bw, plot.y + plot.h - top);
  }
}

/** The axis' top: 1, 2, 2.5 or 5 times a power of ten, at or above v. */
export function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 2.5, 5, 10].map((m) => m * p).find((m) => m >= v) ?? 10 * p;
}

/** Five steps from 0 to top. */
function ticks(top) {
  return [0, 1, 2, 3, 4, 5].map((i) => (top * i) / 5);
}

function label(v) {
  if (v === 0) return '0';
  const a = Math.abs(v);
  return a >= 1000 ? `${+(v / 1000).toPrecision(3)}k` : String(+v.toPrecision(3));
}
