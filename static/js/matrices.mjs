// matrices.mjs - the Matrices pages: the list (#/matrices) here; "New
// matrix" (#/matrices/new) is matrixnew.mjs's and one matrix (#/matrices/ID)
// matrix.mjs's.
//
// The list follows matrix.state events of the app's live stream, so states
// and progress change in place; a matrix it does not know (started
// elsewhere) reloads the list.

import { api } from './api.mjs';
import { h, replace } from './dom.mjs';
import { statePill } from './format.mjs';
import { renderMatrix } from './matrix.mjs';
import { renderNew } from './matrixnew.mjs';
import { absolute, since } from './time.mjs';

export function renderMatrices(main, ctx, rest) {
  if (rest === '') return renderList(main, ctx);
  if (rest === 'new') return renderNew(main, ctx);
  if (/^[1-9][0-9]{0,15}$/.test(rest)) return renderMatrix(main, ctx, Number(rest));
  replace(main,
    h('h1', {}, 'Matrices'),
    h('p', { class: 'alert' }, `There is no page "${rest}" here: `, h('a', { href: '#/matrices' }, 'see the list of matrices'), '.'));
  return null;
}

// ---------------------------------------------------------------- the list

function renderList(main, ctx) {
  const rows = new Map();      // id -> {m, tr}
  let generation = 0;
  let loaded = false;
  let queue = [];
  let reloadTimer = null;
  const status = h('p', { class: 'muted', role: 'status' }, 'Loading the matrices…');
  const body = h('tbody');
  const table = h('table', { class: 'mx-table mx-list', hidden: true },
    h('caption', { class: 'visually-hidden' }, 'Matrices, newest first'),
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Name'),
      h('th', { scope: 'col' }, 'State'),
      h('th', { scope: 'col' }, 'Progress'),
      h('th', { scope: 'col' }, 'Created'))),
    body);

  replace(main,
    h('div', { class: 'page-head' },
      h('h1', {}, 'Matrices'),
      h('a', { class: 'button primary', href: '#/matrices/new' }, 'New matrix')),
    status,
    table);

  async function load() {
    const mine = ++generation;
    loaded = false;
    try {
      const reply = await api('GET', 'matrices');
      if (mine !== generation) return;
      rows.clear();
      replace(body, reply.matrices.map((m) => {
        const row = { m, tr: h('tr', { dataset: { matrix: String(m.id) } }) };
        rows.set(m.id, row);
        drawRow(row);
        return row.tr;
      }));
      table.hidden = reply.matrices.length === 0;
      status.hidden = reply.matrices.length > 0;
      status.className = 'muted';
      replace(status, 'No matrix yet: ', h('a', { href: '#/matrices/new' }, 'New matrix'), ' plans and starts one.');
      loaded = true;
      const pending = queue;
      queue = [];
      for (const ev of pending) apply(ev);
    } catch (err) {
      if (mine !== generation || err.status === 401) return;
      status.textContent = `Could not load the matrices: ${err.message}`;
      status.className = 'alert';
      status.hidden = false;
    }
  }

  function apply(ev) {
    const row = rows.get(ev.data.matrix);
    if (!row) {
      // Started elsewhere (or meanwhile): the list has a new first row.
      clearTimeout(reloadTimer);
      reloadTimer = setTimeout(load, 300);
      return;
    }
    row.m.state = ev.data.state;
    if (ev.data.progress) row.m.progress = ev.data.progress;
    drawRow(row);
  }

  function drawRow({ m, tr }) {
    const p = m.progress ?? {};
    tr.dataset.state = m.state;
    replace(tr,
      h('td', { 'data-label': 'Name' },
        h('a', { href: `#/matrices/${m.id}`, class: 'mx-name' }, m.name), ' ',
        h('span', { class: 'muted' }, `#${m.id}`)),
      h('td', { 'data-label': 'State' }, statePill(m.state)),
      h('td', { 'data-label': 'Progress' },
        h('span', { class: 'mx-mini' },
          h('progress', { max: Math.max(p.total ?? 0, 1), value: p.done ?? 0, 'aria-label': `${m.name}: ${p.done} of ${p.total} runs done` }),
          h('span', { class: 'num' }, `${p.done ?? 0}/${p.total ?? 0}`),
          p.failed ? h('span', { class: 'mx-failed' }, `${p.failed} failed`) : null)),
      h('td', { 'data-label': 'Created' },
        h('time', { datetime: m.created_at, title: absolute(m.created_at), dataset: { rel: '' } }, `${since(m.created_at) ?? '?'} ago`),
        m.actor ? h('span', { class: 'muted' }, ` by ${m.actor}`) : null));
  }

  const onEvent = (e) => { if (loaded) apply(e.detail); else queue.push(e.detail); };
  const onReset = () => { queue = []; load(); };
  const ticker = setInterval(() => {
    for (const el of body.querySelectorAll('time[data-rel]')) el.textContent = `${since(el.dateTime) ?? '?'} ago`;
  }, 10_000);
  ctx.live?.addEventListener('matrix.state', onEvent);
  ctx.live?.addEventListener('reset', onReset);
  (ctx.live ? ctx.live.whenOpen(2000) : Promise.resolve()).then(() => { if (generation === 0) load(); });

  return () => {
    generation += 1;
    clearInterval(ticker);
    clearTimeout(reloadTimer);
    ctx.live?.removeEventListener('matrix.state', onEvent);
    ctx.live?.removeEventListener('reset', onReset);
  };
}
