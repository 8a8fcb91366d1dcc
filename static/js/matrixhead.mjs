// matrixhead.mjs - the head of a matrix page: the crumbs, its name and state,
// one line of what it is (id, actor, created, estimate, seed, rerun of) and
// its spec (a <details> at the bottom of the page), and the window's title.

import { h, replace } from './dom.mjs';
import { specText, statePill } from './format.mjs';
import { absolute, duration, since } from './time.mjs';

export class MatrixHead {
  #title;
  #pill = h('span', { class: 'mx-state' });
  #meta = h('p', { class: 'muted mx-meta' });
  #spec = h('pre', { class: 'cmd spec-view' });

  /** The head of matrix id: nodes (the top of the page) and spec (its bottom). */
  constructor(id) {
    this.#title = h('h1', { class: 'mx-title' }, `Matrix ${id}`);
    this.nodes = [
      h('p', { class: 'crumbs' }, h('a', { href: '#/matrices' }, 'Matrices'), ' / ', `#${id}`),
      h('div', { class: 'page-head' }, this.#title, this.#pill),
      this.#meta,
      // a report to publish: one HTML file without script, or Markdown (GET .../report)
      h('p', { class: 'mx-report' }, 'Report: ',
        h('a', { href: `api/v1/matrices/${id}/report`, download: '', class: 'mx-report-html' }, 'HTML'), ' · ',
        h('a', { href: `api/v1/matrices/${id}/report?format=md`, download: '', class: 'mx-report-md' }, 'Markdown')),
    ];
    this.spec = h('details', { class: 'mx-spec' }, h('summary', {}, 'Spec'), this.#spec);
  }

  /** Show matrix m (its fields without the runs). */
  draw(m) {
    document.title = `${m.name} · Matrices · testbedd`;
    this.#title.textContent = m.name;
    replace(this.#pill, statePill(m.state));
    this.#meta.textContent = [
      `#${m.id}`,
      m.actor ? `by ${m.actor}` : null,
      m.created_at ? `created ${since(m.created_at) ?? '?'} ago (${absolute(m.created_at)})` : null,
      m.estimated_s ? `estimated ${duration(m.estimated_s * 1000)}` : null,
      m.spec?.order === 'shuffled' ? `seed ${m.seed}` : null,
    ].filter(Boolean).join(' · ');
    if (m.rerun_of) this.#meta.append(' · rerun of ', h('a', { href: `#/matrices/${m.rerun_of}` }, `#${m.rerun_of}`));
    // an OS-combination matrix: its OS pairs side by side (osview.mjs)
    if (Array.isArray(m.spec?.os) && m.spec.os.length > 1) this.#meta.append(' · ', h('a', { href: `#/os/${m.id}`, class: 'os-link' }, 'OS side by side'));
    if (m.spec && !this.#spec.textContent) this.#spec.textContent = specText(m.spec);
  }
}
