// runflame.mjs - the flame graphs of one run (issue 20 item 2), beside
// runsamples.mjs and runlatency.mjs on the run page.  A run whose spec asked
// for "profile" has, once it ended, GET /runs/{id}/profile: each profiled end
// (host, side, tool, state, reason).  An end with stacks shows testbedd's SVG
// (GET /runs/{id}/flamegraph.svg?host=H) inline, so that a pointer over a
// frame shows its <title> (name, samples, percent), with a link to open it
// alone; an end without says exactly why ("left: dtrace was not found ...").
// A run that was not profiled (404) shows nothing.
//
// The SVG is testbedd's own drawing (names escaped there, no script); it is
// parsed as XML, checked again for script and event attributes, and only
// then imported: the page's CSP forbids <object>, and <img> shows no titles.
//
// Use (the run page):
//   const flame = new RunFlame();
//   box.append(flame.el);
//   flame.load(runId);   // once the run ended; again is a no-op

import { api } from './api.mjs';
import { h, replace } from './dom.mjs';

const SVG_NS = 'http://www.w3.org/2000/svg';

/** The SVG text as an <svg> node for this document, or null when it is not
 * a plain drawing (parse error, a script, an event handler, a foreign
 * object). */
export function svgNode(text, doc = document) {
  const parsed = new DOMParser().parseFromString(text, 'image/svg+xml');
  const root = parsed.documentElement;
  if (!root || root.namespaceURI !== SVG_NS || root.localName !== 'svg') return null;
  if (parsed.getElementsByTagName('parsererror').length) return null;
  for (const el of [root, ...root.querySelectorAll('*')]) {
    if (['script', 'foreignObject', 'iframe', 'a'].includes(el.localName)) return null;
    for (const attr of el.attributes) {
      if (/^on/i.test(attr.name) || /href$/i.test(attr.name)) return null;
    }
  }
  const node = doc.importNode(root, true);
  node.removeAttribute('width'); // the viewBox scales it to the page
  node.removeAttribute('height');
  return node;
}

export class RunFlame {
  el = h('section', { class: 'run-flame', hidden: true, 'aria-labelledby': 'run-flame-title' },
    h('h2', { id: 'run-flame-title' }, 'Flame graph'));
  #asked = false;

  /** The run's profiles, asked once (404: not profiled, nothing shown). */
  async load(runId) {
    if (this.#asked) return;
    this.#asked = true;
    let x;
    try {
      x = await api('GET', `runs/${runId}/profile`);
    } catch (err) {
      if (err.status !== 404 && err.status !== 401) console.warn('testbedd: the run\'s profile:', err.message);
      if (err.status !== 404) this.#asked = false;
      return;
    }
    const figs = (x.profiles ?? []).map((p) => this.#figure(runId, p));
    replace(this.el, h('h2', { id: 'run-flame-title' }, 'Flame graph'),
      h('p', { class: 'help' }, 'Where the CPU time went during the run, system-wide on the profiled host: each box is a function, as wide as its share of the samples; the callers are below. Point at a box for its name and share.'),
      figs);
    this.el.hidden = false;
  }

  #figure(runId, p) {
    const caption = h('figcaption', {}, `${p.host}, the ${p.side} (${p.tool} -F ${p.frequency}): `,
      p.state === 'ok' ? `${p.samples} samples, ${p.stacks} stacks` : 'no flame graph');
    const fig = h('figure', { class: 'flame', dataset: { host: p.host, state: p.state } }, caption);
    if (p.state !== 'ok') {
      fig.append(h('p', { class: 'alert flame-reason' }, p.reason ?? 'No stacks were recorded.'));
      return fig;
    }
    const href = `api/v1/runs/${runId}/flamegraph.svg?host=${encodeURIComponent(p.host)}`;
    const box = h('div', { class: 'flame-svg' }, h('p', { class: 'muted' }, 'Loading the flame graph…'));
    fig.append(box, h('p', {}, h('a', { href, target: '_blank', rel: 'noopener', class: 'flame-link' }, 'Open the SVG')));
    (async () => {
      try {
        const res = await fetch(href, { credentials: 'same-origin', cache: 'no-store' });
        const text = await res.text();
        if (!res.ok) {
          let msg = text;
          try { msg = JSON.parse(text).error.message; } catch { /* not JSON */ }
          replace(box, h('p', { class: 'alert' }, msg));
          return;
        }
        const node = svgNode(text);
        replace(box, node ?? h('p', { class: 'alert' }, 'The flame graph could not be shown here: open it alone.'));
        box.dataset.loaded = node ? 'ok' : 'refused';
      } catch (err) {
        replace(box, h('p', { class: 'alert' }, `Could not load it: ${err.message}`));
      }
    })();
    return fig;
  }
}
