// livecharts.mjs - the live plot of each run in progress on a matrix page
// (one per running pair: a round of disjoint pairs runs several at once).
//
// A plot starts when its run starts; a late viewer's plot first gets the
// run's intervals so far (GET /runs/{id}: a running run's come from its
// events), then the live tail from run.interval events; each interval is
// kept once whichever way it came.  When no run is in progress the last
// one's plot stays until the next starts.
//
// The plots are drawn by a worker (liveworker.mjs) on OffscreenCanvases, so
// that the page's main thread, busy with tables and box plots, does not
// hold a point back (issue 20 item 0).  The worker reads the page's event
// stream itself: eventSource() gives the page's LiveStream a stand-in for
// an EventSource whose events the worker passes on after drawing the
// intervals among them (one connection, as before).  The page hands the
// worker the run's history too.  Where a browser has no OffscreenCanvas or
// module worker, or the worker fails, the page reads its stream and draws
// the same plots itself (liveplot.mjs).
// Each drawing is reported on the plot's element: data-points (intervals
// held), data-drawn (intervals drawn) and a `tb-drawn` event whose
// detail.at is when they were drawn (tests/bench/chart_delay.mjs).

import { api } from './api.mjs';
import { chartColours } from './charts.mjs';
import { h, replace } from './dom.mjs';
import { pairText, statePill } from './format.mjs';
import { LiveRun } from './liveplot.mjs';

const offscreen = () => typeof Worker === 'function' && typeof OffscreenCanvas === 'function'
  && typeof HTMLCanvasElement.prototype.transferControlToOffscreen === 'function';

export class LiveCharts {
  #runs = new Map();       // run id -> {data: LiveRun, box, fig, caption, r, ended, drawn}
  #plots;                  // false: no plots (the status page shows numbers)
  #worker = null;
  #streams = new Map();    // id -> the WorkerEventSource the worker reads for the page
  #nextStream = 1;
  #failed = !offscreen();  // draw on the page
  #pending = new Set();    // runs to draw on the page
  #frame = 0;
  #sizes = new ResizeObserver((entries) => { for (const en of entries) this.#resized(en.target); });
  #media = null;           // prefers-color-scheme, followed from the first plot on
  #onScheme = () => this.#restyle();

  /** plots: false draws nothing (the status page shows numbers, not plots). */
  constructor(plots = true) {
    this.#plots = plots;
    this.el = h('div', { class: 'live-charts' });
  }

  /** A run (a row of the runs table: id, seq, client, server, protocol, direction, state) is in progress. */
  show(r) {
    if (!this.#plots) return;
    let e = this.#runs.get(r.id);
    if (!e) {
      e = { data: new LiveRun(r.protocol, null), r, ended: false, drawn: 0, caption: h('figcaption') };
      e.fig = h('figure', { class: 'live-chart', dataset: { run: String(r.id), seq: String(r.seq) } }, e.caption);
      this.#runs.set(r.id, e);
      this.el.append(e.fig);
      this.#plot(e);
      this.#history(e);
    }
    e.r = r;
    e.ended = false;
    this.#caption(e);
    this.#prune();
  }

  /**
   * A run.interval event's data.  With a worker it came through the
   * worker's stream, which drew it already: the page only counts it.
   */
  interval(r, side, n, interval) {
    if (!this.#plots) return;
    if (!this.#runs.has(r.id)) this.show(r);
    this.#take(this.#runs.get(r.id), [[side, n, interval]], false);
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
    for (const e of [...this.#runs.values()]) this.#drop(e);
    replace(this.el);
  }

  /** The page is left: the worker and its stream end. */
  stop() {
    this.clear();
    this.#worker?.terminate();
    this.#worker = null;
    this.#sizes.disconnect();
    this.#media?.removeEventListener('change', this.#onScheme);
  }

  get size() { return this.#runs.size; }

  /**
   * What the page's LiveStream reads its stream with (its source option):
   * the worker's EventSource through a stand-in, or, without a worker, an
   * EventSource of the page's own.
   */
  eventSource(url, names) {
    const worker = this.#plots && !this.#failed ? this.#startWorker() : null;
    if (!worker) return new EventSource(url);
    const id = this.#nextStream++;
    const es = new WorkerEventSource(() => { worker.postMessage({ op: 'close', id }); this.#streams.delete(id); });
    this.#streams.set(id, es);
    worker.postMessage({ op: 'open', id, url: String(url), names });
    return es;
  }

  /** A fresh plot element for e, given to the worker (or drawn here). */
  #plot(e) {
    if (!this.#media && window.matchMedia) {
      this.#media = window.matchMedia('(prefers-color-scheme: dark)');
      this.#media.addEventListener('change', this.#onScheme);
    }
    const label = `Run ${e.r.seq}`;
    const rate = h('canvas', { class: 'chart chart-rate', role: 'img', 'aria-label': `${label}: bitrate per interval` });
    const detail = h('canvas', {
      class: 'chart chart-detail', role: 'img',
      'aria-label': `${label}: ${e.r.protocol === 'udp' ? 'jitter and loss' : 'retransmits, cwnd and RTT'} per interval`,
    });
    e.box?.remove();
    if (e.box) this.#sizes.unobserve(e.box);
    e.box = h('div', { class: 'interval-chart live-plot', dataset: { points: String(this.#count(e)), drawn: '0' } }, rate, detail);
    e.fig.append(e.box);
    this.#sizes.observe(e.box);
    const worker = this.#failed ? null : this.#startWorker();
    if (!worker) {
      e.data.attach([rate, detail]);
      e.data.size = this.#size(e.box);
      e.data.style = style();
      this.#draw(e);
      return;
    }
    const canvases = [rate.transferControlToOffscreen(), detail.transferControlToOffscreen()];
    worker.postMessage({ op: 'chart', run: e.r.id, protocol: e.r.protocol, canvases, size: this.#size(e.box), style: style() },
      canvases);
    this.#toWorker(e, e.data.entries());
  }

  #startWorker() {
    if (this.#worker) return this.#worker;
    try {
      this.#worker = new Worker(new URL('./liveworker.mjs', import.meta.url), { type: 'module' });
    } catch (err) {
      return this.#fail(err);
    }
    this.#worker.onmessage = (m) => this.#message(m.data);
    this.#worker.onerror = (err) => this.#fail(err);
    return this.#worker;
  }

  /**
   * The worker failed (or could not start): the page draws every plot from
   * now on, on new canvases, and its LiveStream, told that the stream
   * closed, opens one of its own (and replays from the last event it had).
   */
  #fail(err) {
    console.warn('testbedd: the live plots are drawn on the page:', err?.message ?? err);
    this.#worker?.terminate();
    this.#worker = null;
    this.#failed = true;
    for (const e of this.#runs.values()) this.#plot(e);
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    for (const es of streams) es.deliver({ kind: 'error', readyState: 2 });
    return null;
  }

  #message(m) {
    if (m?.op === 'stream') this.#streams.get(m.id)?.deliver(m);
    else if (m?.op === 'drawn') {
      const e = this.#runs.get(m.run);
      if (e) this.#report(e, m);
    }
  }

  /** Intervals of e's run ([side, n, interval]); toWorker: the worker has not seen them all (the history). */
  #take(e, list, toWorker) {
    if (this.#worker && toWorker) this.#toWorker(e, list);
    let added = false;
    for (const [side, n, iv] of list) added = e.data.add(side, n, iv) || added;
    if (!added) return;
    e.box.dataset.points = String(Math.max(this.#count(e), e.drawn));
    if (!this.#worker) this.#draw(e);
  }

  #toWorker(e, list) {
    if (list.length) this.#worker.postMessage({ op: 'intervals', run: e.r.id, protocol: e.r.protocol, list });
  }

  #count(e) {
    const c = e.data.counts;
    return c.client + c.server;
  }

  #report(e, m) {
    e.drawn = m.client + m.server;
    e.box.dataset.drawn = String(e.drawn);
    e.box.dataset.points = String(Math.max(this.#count(e), e.drawn));
    e.box.dispatchEvent(new CustomEvent('tb-drawn', { bubbles: true, detail: { client: m.client, server: m.server, at: m.at } }));
  }

  /** Draw e on the page (no worker): in the next animation frame, with every other plot that changed. */
  #draw(e) {
    this.#pending.add(e.r.id);
    this.#frame ||= requestAnimationFrame(() => {
      this.#frame = 0;
      for (const id of this.#pending) {
        const x = this.#runs.get(id);
        if (x?.data.draw()) this.#report(x, { ...x.data.counts, at: performance.timeOrigin + performance.now() });
      }
      this.#pending.clear();
    });
  }

  #size(box) {
    const [rate, detail] = box.querySelectorAll('canvas');
    return { width: box.clientWidth, height: [rate.clientHeight, detail.clientHeight], ratio: window.devicePixelRatio || 1 };
  }

  #resized(box) {
    const e = [...this.#runs.values()].find((x) => x.box === box);
    if (!e) return;
    const size = this.#size(box);
    if (this.#worker) this.#worker.postMessage({ op: 'size', run: e.r.id, size });
    else if (e.data.canvases) { e.data.size = size; this.#draw(e); }
  }

  #restyle() {
    const s = style();
    if (this.#worker) this.#worker.postMessage({ op: 'style', style: s });
    for (const e of this.#runs.values()) {
      if (e.data.canvases) { e.data.style = s; this.#draw(e); }
    }
  }

  #drop(e) {
    this.#sizes.unobserve(e.box);
    this.#worker?.postMessage({ op: 'drop', run: e.r.id });
    e.fig.remove();
    this.#runs.delete(e.r.id);
  }

  /** Ended plots go when a run is in progress; else only the latest ended stays. */
  #prune() {
    const all = [...this.#runs.values()];
    const running = all.some((e) => !e.ended);
    const keep = running ? null : all.filter((e) => e.ended).sort((a, b) => b.r.seq - a.r.seq)[0];
    for (const e of all) if (e.ended && e !== keep) this.#drop(e);
  }

  #caption(e) {
    const r = e.r;
    replace(e.caption, h('strong', {}, `seq ${r.seq}`), ' ', `${pairText(r)} ${r.protocol} ${r.direction} `,
      statePill(r.state), ' ', h('a', { href: `#/runs/${r.id}`, class: 'live-full' }, 'full chart'));
  }

  async #history(e) {
    try {
      const { run } = await api('GET', `runs/${e.r.id}`);
      const list = [];
      for (const side of ['client', 'server']) (run.intervals?.[side] ?? []).forEach((iv, n) => list.push([side, n, iv]));
      if (this.#runs.get(e.r.id) === e) this.#take(e, list, true);
    } catch { /* the live tail still comes */ }
  }
}

/** The page's colours for a plot, in its scheme. */
function style() {
  const dark = window.matchMedia?.('(prefers-color-scheme: dark)').matches;
  return { scheme: dark ? 'dark' : 'light', ...chartColours() };
}

/**
 * An EventSource's interface (what LiveStream uses of it) over the worker's:
 * open, error and the named events, with readyState; close() ends it.
 */
class WorkerEventSource extends EventTarget {
  #close;

  constructor(close) {
    super();
    this.#close = close;
    this.readyState = 0;   // CONNECTING
  }

  close() {
    if (this.readyState === 2) return;
    this.readyState = 2;
    this.#close();
  }

  /** A message about this stream from the worker ({kind, readyState, type, data, lastEventId}). */
  deliver(m) {
    if (this.readyState === 2 && m.kind !== 'error') return;
    if (m.kind === 'event') {
      this.dispatchEvent(new MessageEvent(m.type, { data: m.data, lastEventId: m.lastEventId }));
      return;
    }
    this.readyState = m.readyState;
    this.dispatchEvent(new Event(m.kind));
  }
}
