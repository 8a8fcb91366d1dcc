// bootstable.mjs - the "Boots" section of a matrix page: the boots its OS
// combinations need (the matrix's boots: host, from -> to, the boot path
// planned, before which run, state, boot action, error); hidden while there
// are none.

import { h, replace } from './dom.mjs';
import { statePill } from './format.mjs';

export class BootsTable {
  #body = h('tbody');

  constructor() {
    this.el = h('section', { class: 'mx-boots', 'aria-labelledby': 'mx-boots-title', hidden: true },
      h('h2', { id: 'mx-boots-title' }, 'Boots'),
      h('p', { class: 'help' }, 'The OS combinations need these boots; each is a boot action, with its steps and exact commands on the Hosts page.'),
      h('div', { class: 'table-wrap' }, h('table', { class: 'mx-table boots-table' },
        h('caption', { class: 'visually-hidden' }, 'The boots this matrix did'),
        h('thead', {}, h('tr', {}, ['host', 'from → to', 'path', 'for', 'state', 'action', 'error'].map((c) => h('th', { scope: 'col' }, c)))),
        this.#body)));
  }

  /** Show boots (a matrix's boots, or nothing). */
  draw(boots) {
    boots ??= [];
    this.el.hidden = boots.length === 0;
    replace(this.#body, boots.map((b) => h('tr', { dataset: { state: b.state, host: b.host } },
      h('td', { 'data-label': 'host' }, b.host),
      h('td', { 'data-label': 'from → to' }, `${b.from ?? 'off'} → ${b.to}`),
      h('td', { 'data-label': 'path', class: [!b.path && 'na'], title: 'the boot path planned as the boot started (README "Boot paths")' }, b.path ?? '—'),
      h('td', { 'data-label': 'for' }, b.before_seq === null ? 'after the last run' : `run ${b.before_seq}`),
      h('td', { 'data-label': 'state', class: 'state-cell' }, statePill(b.state)),
      h('td', { 'data-label': 'action', class: 'num' }, b.action ? `#${b.action}` : '—'),
      h('td', { 'data-label': 'error', class: ['error-cell', !b.error && 'na'] }, b.error ?? '—'))));
  }
}
