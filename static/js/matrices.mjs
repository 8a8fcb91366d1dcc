// matrices.mjs - the Matrices pages: the list (#/matrices) here; "New
// matrix" (#/matrices/new) is matrixnew.mjs's, one matrix (#/matrices/ID,
// #/matrices/ID?cell=N for a cell) matrix.mjs's and a cell's history
// (#/matrices/ID/cells/N/history) history.mjs's.
//
// The list is filtered by name, state and creation time and paged (GET
// /api/v1/matrices?name=&state=&since=&offset=&limit=); the filters live in
// the address (#/matrices?name=nightly&state=succeeded&page=2), so a
// filtered list is a link too.  It follows matrix.state events of the app's
// live stream, so states and progress change in place; a matrix it does not
// know (started elsewhere) reloads the list.

import { api } from './api.mjs';
import { h, replace } from './dom.mjs';
import { exportBar } from './export.mjs';
import { statePill } from './format.mjs';
import { renderHistory } from './history.mjs';
import { renderMatrix } from './matrix.mjs';
import { renderNew } from './matrixnew.mjs';
import { schedulesSection } from './schedules.mjs';
import { absolute, since } from './time.mjs';

const PAGE = 50;
const STATES = ['queued', 'running', 'succeeded', 'failed', 'canceled', 'interrupted'];

/** The query of the address (#/matrices/12?cell=3 -> cell=3). */
export function hashQuery() {
  const i = location.hash.indexOf('?');
  return new URLSearchParams(i < 0 ? '' : location.hash.slice(i + 1));
}

export function renderMatrices(main, ctx, rest) {
  if (rest === '') return renderList(main, ctx);
  if (rest === 'new') return renderNew(main, ctx);
  if (/^[1-9][0-9]{0,15}$/.test(rest)) {
    const cell = hashQuery().get('cell');
    return renderMatrix(main, ctx, Number(rest), cell !== null && /^[0-9]{1,7}$/.test(cell) ? Number(cell) : null);
  }
  const hist = /^([1-9][0-9]{0,15})\/cells\/([0-9]{1,7})\/history$/.exec(rest);
  if (hist) return renderHistory(main, ctx, Number(hist[1]), Number(hist[2]), hashQuery());
  replace(main,
    h('h1', {}, 'Matrices'),
    h('p', { class: 'alert' }, `There is no page "${rest}" here: `, h('a', { href: '#/matrices' }, 'see the list of matrices'), '.'));
  return null;
}

// ---------------------------------------------------------------- the list

function renderList(main, ctx) {
  const rows = new Map();      // id -> {m, tr}
  const q = hashQuery();
  const filter = {
    name: q.get('name') ?? '', state: STATES.includes(q.get('state')) ? q.get('state') : '',
    since: /^\d{4}-\d{2}-\d{2}$/.test(q.get('since') ?? '') ? q.get('since') : '',
    page: Math.max(0, Number.parseInt(q.get('page') ?? '0', 10) || 0),
  };
  let total = 0;
  let shown = [];
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

  const nameIn = h('input', { type: 'search', name: 'name', value: filter.name, maxlength: 128, placeholder: 'a part of the name' });
  const stateIn = h('select', { name: 'state' }, h('option', { value: '' }, 'any'),
    STATES.map((st) => h('option', { value: st, selected: st === filter.state }, st)));
  const sinceIn = h('input', { type: 'date', name: 'since', value: filter.since });
  const form = h('form', { class: 'mx-filters', role: 'search', 'aria-label': 'Filter the matrices' },
    h('label', {}, 'Name ', nameIn), h('label', {}, 'State ', stateIn), h('label', {}, 'Created since ', sinceIn),
    h('button', { type: 'submit' }, 'Filter'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    Object.assign(filter, { name: nameIn.value.trim(), state: stateIn.value, since: sinceIn.value, page: 0 });
    remember();
    load();
  });
  const prev = h('button', { type: 'button', class: 'page-prev' }, '← Newer');
  const next = h('button', { type: 'button', class: 'page-next' }, 'Older →');
  const where = h('span', { class: 'muted page-where' });
  prev.addEventListener('click', () => { filter.page -= 1; remember(); load(); });
  next.addEventListener('click', () => { filter.page += 1; remember(); load(); });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of matrices', hidden: true }, prev, where, next);
  const downloads = exportBar('matrices', () => shown.map((m) => ({
    id: m.id, name: m.name, state: m.state, created_at: m.created_at, started_at: m.started_at,
    finished_at: m.finished_at, actor: m.actor, runs: m.progress?.total, done: m.progress?.done, ok: m.progress?.ok,
    failed: m.progress?.failed, rerun_of: m.rerun_of,
  })));

  replace(main,
    h('div', { class: 'page-head' },
      h('h1', {}, 'Matrices'),
      h('a', { class: 'button primary', href: '#/matrices/new' }, 'New matrix')),
    form,
    h('div', { class: 'section-head' }, pager, downloads),
    status,
    table,
    schedulesSection());

  /** The filters into the address (no reload: replaceState fires no hashchange). */
  function remember() {
    const p = new URLSearchParams();
    for (const k of ['name', 'state', 'since']) if (filter[k]) p.set(k, filter[k]);
    if (filter.page > 0) p.set('page', String(filter.page));
    const qs = p.toString();
    history.replaceState(null, '', `#/matrices${qs ? `?${qs}` : ''}`);
  }

  function query() {
    const p = new URLSearchParams({ offset: String(filter.page * PAGE), limit: String(PAGE) });
    if (filter.name) p.set('name', filter.name);
    if (filter.state) p.set('state', filter.state);
    if (filter.since) p.set('since', `${filter.since}T00:00:00Z`);
    return p.toString();
  }

  const filtered = () => Boolean(filter.name || filter.state || filter.since);

  async function load() {
    const mine = ++generation;
    loaded = false;
    try {
      const reply = await api('GET', `matrices?${query()}`);
      if (mine !== generation) return;
      rows.clear();
      replace(body, reply.matrices.map((m) => {
        const row = { m, tr: h('tr', { dataset: { matrix: String(m.id) } }) };
        rows.set(m.id, row);
        drawRow(row);
        return row.tr;
      }));
      shown = reply.matrices;
      total = reply.total ?? reply.matrices.length;
      const from = filter.page * PAGE;
      pager.hidden = total <= PAGE && filter.page === 0;
      prev.disabled = filter.page === 0;
      next.disabled = from + reply.matrices.length >= total;
      where.textContent = reply.matrices.length ? `${from + 1}–${from + reply.matrices.length} of ${total}` : `none of ${total}`;
      table.hidden = reply.matrices.length === 0;
      status.hidden = reply.matrices.length > 0;
      status.className = 'muted';
      if (filtered() || filter.page > 0) replace(status, 'No matrix matches these filters.');
      else replace(status, 'No matrix yet: ', h('a', { href: '#/matrices/new' }, 'New matrix'), ' plans and starts one.');
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
      if (filtered() || filter.page > 0) return;   // a new matrix goes on the first unfiltered page
      // Started elsewhere (or meanwhile): the list has a new first row.
      clearTimeout(reloadTimer);
      reloadTimer = setTimeout(load, 300);
      return;
    }
    row.m.state = ev.data.state;
    if (ev.data.progress) row.m.progress = ev.data.progress;
    // a queued matrix's place and reason (the runner's event says waiting_for alone when only that changed)
    if (ev.data.queue !== undefined) row.m.queue = ev.data.queue;
    if (ev.data.waiting_for) row.m.queue = { ...(row.m.queue ?? {}), waiting_for: ev.data.waiting_for };
    if (row.m.state !== 'queued') delete row.m.queue;
    drawRow(row);
  }

  function drawRow({ m, tr }) {
    const p = m.progress ?? {};
    tr.dataset.state = m.state;
    replace(tr,
      h('td', { 'data-label': 'Name' },
        h('a', { href: `#/matrices/${m.id}`, class: 'mx-name' }, m.name), ' ',
        h('span', { class: 'muted' }, `#${m.id}`)),
      h('td', { 'data-label': 'State' }, statePill(m.state),
        m.state === 'queued' && m.queue ? h('div', { class: 'muted mx-queue' },
          m.queue.position ? `#${m.queue.position} in the queue` : null,
          m.queue.position && m.queue.waiting_for ? ' · ' : null,
          m.queue.waiting_for ?? null) : null),
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
