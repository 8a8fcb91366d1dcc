// liveworker.mjs - a module worker that draws a matrix page's live plots off
// the page's main thread (issue 20 item 0): the page's event stream is read
// here (its EventSource is this worker's: the page's LiveStream holds a
// stand-in, livecharts.mjs's WorkerEventSource), each run.interval event is
// drawn at once on the run's OffscreenCanvases (liveplot.mjs) and every
// event is passed on to the page, in order.  So a point reaches the screen
// however busy the page's main thread is (box plots, a table's JSON), and
// the page holds no more connections than before (a browser allows six per
// server over HTTP/1.1, all tabs together).
//
// The page sends its intervals too (the run's history from GET /runs/{id}):
// a LiveRun keeps each once, whichever way it came.
//
// Messages from the page:
//   {op: 'open', id, url, names}  read the stream at url, passing on events named names
//   {op: 'close', id}
//   {op: 'chart', run, protocol, canvases, size, style}   draw run on canvases (transferred)
//   {op: 'size', run, size}  {op: 'style', style}  {op: 'drop', run}
//   {op: 'intervals', run, protocol, list: [[side, n, interval], ...]}
// To the page:
//   {op: 'stream', id, kind: 'open' | 'error' | 'event', readyState, type, data, lastEventId}
//   {op: 'drawn', run, client, server, at} after each drawing (at: the wall-clock ms it was drawn)

import { LiveRun } from './liveplot.mjs';

const runs = new Map();      // run id -> LiveRun (canvases null until the page charts it)
const KEEP_UNCHARTED = 16;   // runs whose intervals came before their chart, kept at most
let style = null;
const streams = new Map();   // id -> EventSource
let last = -1e9;             // performance.now() of the last drawing
let timer = null;
const dirty = new Set();

self.onmessage = (e) => {
  const m = e.data;
  if (m.op === 'open') open(m.id, m.url, m.names);
  else if (m.op === 'close') {
    streams.get(m.id)?.close();
    streams.delete(m.id);
  } else if (m.op === 'chart') {
    const r = runOf(m.run, m.protocol);
    r.attach(m.canvases);
    r.size = m.size;
    style = m.style ?? style;
    mark(m.run);
  } else if (m.op === 'size') {
    const r = runs.get(m.run);
    if (r) { r.size = m.size; mark(m.run); }
  } else if (m.op === 'style') {
    style = m.style;
    for (const id of runs.keys()) mark(id);
  } else if (m.op === 'drop') {
    runs.delete(m.run);
    dirty.delete(m.run);
  } else if (m.op === 'intervals') {
    const r = runOf(m.run, m.protocol);
    let added = false;
    for (const [side, n, iv] of m.list) added = r.add(side, n, iv) || added;
    if (added) mark(m.run);
  }
};

function runOf(id, protocol) {
  let r = runs.get(id);
  if (!r) {
    r = new LiveRun(protocol ?? 'tcp', null);
    runs.set(id, r);
    const uncharted = [...runs.entries()].filter(([, x]) => !x.canvases);
    for (const [old] of uncharted.slice(0, Math.max(0, uncharted.length - KEEP_UNCHARTED))) runs.delete(old);
  }
  if (protocol) r.protocol = protocol;
  return r;
}

/** Read the stream at url; pass on its state and the events named names, drawing the run.interval ones. */
function open(id, url, names) {
  const es = new EventSource(url);
  streams.set(id, es);
  const state = (kind) => () => postMessage({ op: 'stream', id, kind, readyState: es.readyState });
  es.onopen = state('open');
  es.onerror = state('error');
  const pass = (e) => {
    postMessage({ op: 'stream', id, kind: 'event', type: e.type, data: e.data, lastEventId: e.lastEventId });
    if (e.type !== 'run.interval') return;
    let d;
    try {
      d = JSON.parse(e.data).data ?? {};
    } catch {
      return;   // the page says so
    }
    if (runOf(d.run, null).add(d.side, d.n, d.interval)) mark(d.run);
  };
  for (const name of names) es.addEventListener(name, pass);
}

// Draw at once when nothing was drawn in the last 16 ms (a point reaches the
// screen with this task), else once those are over: at most one drawing a frame.
function mark(id) {
  dirty.add(id);
  if (timer !== null) return;
  const wait = 16 - (performance.now() - last);
  if (wait <= 0) flush();
  else timer = setTimeout(flush, wait);
}

function flush() {
  timer = null;
  last = performance.now();
  for (const id of dirty) {
    const r = runs.get(id);
    if (!r?.canvases) continue;
    r.style = style;
    if (r.draw()) postMessage({ op: 'drawn', run: id, ...r.counts, at: performance.timeOrigin + performance.now() });
  }
  dirty.clear();
}
