// matrices.mjs - the Matrices pages: the list (#/matrices) and "New matrix"
// (#/matrices/new); one matrix (#/matrices/ID) is matrix.mjs's.
//
// The list follows matrix.state events of the app's live stream, so states
// and progress change in place; a matrix it does not know (started
// elsewhere) reloads the list.  "New matrix" edits a spec in the builder's
// form (builder.mjs) or as JSON, the two kept in step, plans it
// (POST /api/v1/matrices/plan: no side effects, so a viewer may) and starts
// it (POST /api/v1/matrices: operators and admins).  The spec being edited
// is kept in sessionStorage, so it survives going to a matrix and back.

import { api } from './api.mjs';
import { SpecBuilder } from './builder.mjs';
import { announce, h, replace } from './dom.mjs';
import { errorText, operatorOnly, pairText, specText, statePill } from './format.mjs';
import { renderMatrix } from './matrix.mjs';
import { absolute, duration, since } from './time.mjs';

// deploy/examples/baseline.json (the browser test checks that they agree);
// the pair is replaced by the first two machines of role host.
const BASELINE = {
  name: 'baseline',
  pairs: [{ client: 'left', server: 'right' }],
  protocols: ['tcp', 'udp'],
  directions: ['forward', 'reverse'],
  duration_s: 10,
  repeats: 3,
  order: 'interleaved',
  iperf: { udp_bitrate: '0' },
};
const DRAFT_KEY = 'testbedd.matrix-spec';
const PLAN_ROWS = 500;       // a plan may have 100000 runs: the API answers a page of them, the table shows this many at a time

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

// ---------------------------------------------------------------- new matrix

function renderNew(main, ctx) {
  document.title = 'New matrix · testbedd';
  let generation = 0;
  const canStart = ctx.canOperate();
  const textarea = h('textarea', {
    id: 'spec', class: 'spec mono', rows: 14, spellcheck: 'false', autocapitalize: 'off', autocomplete: 'off',
    'aria-describedby': 'spec-help spec-error',
  });
  const error = h('div', { id: 'spec-error', class: 'spec-error', role: 'alert', hidden: true });
  const planButton = h('button', { type: 'button', class: 'plan' }, 'Plan');
  const startButton = h('button', {
    type: 'button', class: 'primary start', disabled: !canStart,
    title: canStart ? null : operatorOnly(ctx, 'Starting a matrix'),
  }, 'Start');
  const example = h('button', { type: 'button', class: 'example', title: 'Replace the spec with the baseline example' },
    'Restore the example');
  const plan = h('section', { class: 'plan-out', 'aria-label': 'Plan', hidden: true });
  const builder = new SpecBuilder(() => {
    // the form changed: its keys into the JSON, keeping the keys it does not show
    let base = {};
    try {
      const v = JSON.parse(textarea.value);
      if (v && typeof v === 'object' && !Array.isArray(v)) base = v;
    } catch { /* the JSON was broken: the form's keys start it again */ }
    textarea.value = specText(builder.read(base));
    saveDraft();
    builder.clearErrors();
    clearError();
  });
  const loadFrom = h('select', { id: 'spec-from', class: 'spec-from' },
    h('option', { value: '' }, 'Start from…'), h('option', { value: 'example' }, 'the baseline example'));

  replace(main,
    h('div', { class: 'page-head' },
      h('h1', {}, 'New matrix'),
      h('a', { href: '#/matrices' }, 'All matrices')),
    h('div', { class: 'spec-from-row' }, h('label', { for: 'spec-from' }, 'Load a spec: '), loadFrom,
      h('span', { class: 'help' }, ' the example, or an earlier matrix\'s spec to edit and run again')),
    builder.el,
    h('div', { class: 'spec-form' },
      h('label', { for: 'spec', class: 'spec-label' }, 'Spec (JSON): the same as the form; edit either'),
      h('p', { id: 'spec-help', class: 'help' },
        'Pairs, protocols, directions, duration_s, repeats, order and iperf options; a list sweeps a value; ',
        'keys the form does not show (caps, groups, seed) are kept. ',
        'Plan shows the runs it stands for without running anything (Ctrl+Enter). ',
        'The format: ', h('code', {}, 'MatrixSpec'), ' in ', h('code', {}, 'api/openapi.yaml'), '.'),
      textarea,
      error,
      h('div', { class: 'spec-buttons' }, planButton, startButton, example),
      canStart ? null : h('p', { class: 'help' }, `${operatorOnly(ctx, 'Starting a matrix')}; you can plan one.`)),
    plan);

  function showError(message, field) {
    // testbedd's messages start with the field they name: it is shown once, apart.
    const text = field && message.startsWith(`${field}: `) ? message.slice(field.length + 2) : message;
    replace(error,
      field ? [h('code', { class: 'field' }, field), ' '] : null,
      h('span', { class: 'message' }, text));
    error.hidden = false;
    textarea.setAttribute('aria-invalid', 'true');
    if (field) builder.fieldError(field, text);
  }
  function clearError() {
    error.hidden = true;
    textarea.removeAttribute('aria-invalid');
    builder.clearErrors();
  }
  function saveDraft() {
    sessionStorage.setItem(DRAFT_KEY, textarea.value);
    if (!plan.hidden) plan.dataset.stale = 'yes';
  }
  /** The JSON into the form, when it is a spec object. */
  function toForm() {
    try {
      const v = JSON.parse(textarea.value);
      if (v && typeof v === 'object' && !Array.isArray(v)) builder.set(v);
    } catch { /* the person is typing: the form waits for JSON */ }
  }

  /** The spec in the textarea, or null (with the error shown) when it is not a JSON object. */
  function spec() {
    let value;
    try {
      value = JSON.parse(textarea.value);
    } catch (err) {
      showError(`The spec is not JSON: ${err.message}`);
      return null;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      showError('The spec is a JSON object: {"name": …, "pairs": […], …}');
      return null;
    }
    return value;
  }

  async function busy(button, fn) {
    const mine = ++generation;
    clearError();
    const s = spec();
    if (s === null) return;
    planButton.disabled = true;
    startButton.disabled = true;
    button.setAttribute('aria-busy', 'true');
    try {
      await fn(s, mine);
    } catch (err) {
      if (mine !== generation || err.status === 401) return;
      showError(err.status === 400 ? err.message : errorText(err, button === startButton ? 'Not started' : 'Not planned'),
        err.field);
    } finally {
      if (mine === generation) {
        planButton.disabled = false;
        startButton.disabled = !canStart;
        button.removeAttribute('aria-busy');
      }
    }
  }

  planButton.addEventListener('click', () => busy(planButton, async (s, mine) => {
    const reply = await api('POST', `matrices/plan?limit=${PLAN_ROWS}`, s);
    if (mine !== generation) return;
    // the next pages post the plan's own spec (its seed set): pages of the same plan
    const next = async (offset) => {
      const page = await api('POST', `matrices/plan?offset=${offset}&limit=${PLAN_ROWS}`, reply.plan.spec);
      return mine === generation ? page.plan : null;
    };
    drawPlan(plan, reply.plan, next);
    announce(`Planned: ${reply.plan.runs} runs, about ${duration(reply.plan.estimated_s * 1000)}`);
  }));
  startButton.addEventListener('click', () => busy(startButton, async (s) => {
    const reply = await api('POST', 'matrices', s);
    announce(`Matrix ${reply.matrix.id} started`);
    location.hash = `#/matrices/${reply.matrix.id}`;
  }));
  textarea.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      planButton.click();
    }
  });
  textarea.addEventListener('input', () => {
    saveDraft();
    toForm();
  });
  example.addEventListener('click', async () => {
    sessionStorage.removeItem(DRAFT_KEY);
    textarea.value = await exampleSpec();
    toForm();
    clearError();
    textarea.focus();
  });
  loadFrom.addEventListener('change', async () => {
    const from = loadFrom.value;
    loadFrom.value = '';
    if (!from) return;
    try {
      textarea.value = from === 'example' ? await exampleSpec() : specText(stripPlanned((await api('GET', `matrices/${from}?runs=0`)).matrix.spec));
    } catch (err) {
      if (err.status !== 401) showError(`Could not load the spec of matrix ${from}: ${err.message}`);
      return;
    }
    saveDraft();
    toForm();
    clearError();
    announce(from === 'example' ? 'The baseline example is loaded' : `The spec of matrix ${from} is loaded`);
  });
  // the machines for the form's choices, and earlier matrices to load from
  Promise.all([api('GET', 'hosts').catch(() => ({ hosts: [] })), api('GET', 'matrices?limit=30').catch(() => ({ matrices: [] }))])
    .then(([{ hosts }, { matrices }]) => {
      builder.setMachines(hosts);
      for (const m of matrices) loadFrom.append(h('option', { value: String(m.id) }, `matrix #${m.id} ${m.name} (${m.state})`));
      toForm();
      builder.el.dataset.ready = 'yes';
    });

  const draft = sessionStorage.getItem(DRAFT_KEY);
  if (draft !== null) {
    textarea.value = draft;
  } else {
    textarea.value = specText(BASELINE);
    exampleSpec().then((text) => {
      if (sessionStorage.getItem(DRAFT_KEY) === null) textarea.value = text;
      textarea.dataset.ready = 'yes';
    });
  }
  if (draft !== null) textarea.dataset.ready = 'yes';

  return () => { generation += 1; };
}

/**
 * A stored spec (defaults filled, groups expanded to pairs) as a spec to
 * edit: the groups go, since their pairs are listed.
 */
function stripPlanned(spec) {
  const s = structuredClone(spec);
  if (s.groups && s.pairs) delete s.groups;
  return s;
}

/** The baseline example with its pair made of this inventory's first two machines of role host. */
async function exampleSpec() {
  const spec = structuredClone(BASELINE);
  try {
    const hosts = (await api('GET', 'hosts')).hosts.filter((m) => m.role === 'host').map((m) => m.name);
    if (hosts.length) spec.pairs = [{ client: hosts[0], server: hosts[1] ?? hosts[0] }];
  } catch (err) {
    console.warn('testbedd: the machines for the example spec:', err.message);
  }
  return specText(spec);
}

const TIMELINE_ROUNDS = 60;   // the timeline shows the first rounds

/** The rounds as a timeline: one block per round, as wide as its share of the time, its runs stacked. */
function drawTimeline(plan) {
  // the API sends the rounds of the runs it sent (the first page's)
  const rounds = plan.timeline.slice(0, TIMELINE_ROUNDS);
  const end = rounds.at(-1)?.end_s || 1;
  const bySeq = new Map(plan.plan.map((r) => [r.seq, r]));
  return h('figure', { class: 'plan-timeline' },
    h('figcaption', {}, `Timeline${plan.rounds > rounds.length ? ` (the first ${rounds.length} of ${plan.rounds} rounds)` : ''}`),
    h('ol', { class: 'timeline' }, rounds.map((t) => h('li', {
      class: 'tl-round', dataset: { round: String(t.round) },
      title: `round ${t.round}: ${t.start_s}–${t.end_s} s`,
    },
    h('span', { class: 'tl-head' }, `round ${t.round}`, h('span', { class: 'muted' }, ` ${Math.round(t.start_s)}–${Math.round(t.end_s)} s`)),
    t.boots?.length ? h('span', { class: 'tl-boots' }, `after booting ${t.boots.join(', ')}`) : null,
    t.runs.map((seq) => {
      const r = bySeq.get(seq);
      return h('span', { class: 'tl-run', dataset: { seq: String(seq) } },
        r ? `${seq}: ${r.client} → ${r.server} ${r.protocol} ${r.direction}` : `${seq}`);
    })))),
    h('p', { class: 'help' }, `The runs of a round start together; the next round starts when the longest has ended (about ${Math.round(end)} s for these).`));
}

/** The boots the plan needs, in order, each with its estimate. */
function drawBoots(plan) {
  const total = plan.boots.reduce((a, b) => a + b.estimated_s, 0);
  return h('section', { class: 'plan-boots', 'aria-labelledby': 'plan-boots-title' },
    h('h3', { id: 'plan-boots-title' }, `${plan.boots.length} boot${plan.boots.length === 1 ? '' : 's'}`,
      h('span', { class: 'muted' }, ` · about ${duration(total * 1000)} in all`)),
    h('ol', { class: 'boot-list' }, plan.boots.map((b) => h('li', { dataset: { machine: b.machine, seq: String(b.seq ?? '') } },
      h('span', { class: 'boot-when' }, b.seq === null ? 'after the last run' : `before run ${b.seq}`), ': ',
      h('strong', {}, b.machine), ` ${b.from ?? 'off'} → `, h('strong', {}, b.to),
      h('span', { class: 'muted' }, ` (about ${duration(b.estimated_s * 1000)})`)))));
}

/** One row of the plan's table. */
function planRow(r) {
  return h('tr', { dataset: { seq: String(r.seq) } },
    h('td', { 'data-label': 'seq', class: 'num' }, String(r.seq)),
    h('td', { 'data-label': 'round', class: 'num' }, String(r.round)),
    h('td', { 'data-label': 'client → server' }, pairText(r),
      r.link ? h('span', { class: 'muted' }, ` (${r.link} ${r.server_address})`) : null),
    h('td', { 'data-label': 'protocol' }, r.protocol),
    h('td', { 'data-label': 'direction' }, r.direction),
    h('td', { 'data-label': 'iperf args' }, h('code', {}, r.iperf_args ?? '')));
}

/**
 * The plan: its summary, boots, timeline and runs.  The API sends a page of
 * the runs (plan.page); when there are more, "Show more" asks next(offset)
 * for the next page and adds its rows.
 */
function drawPlan(el, plan, next) {
  delete el.dataset.stale;
  const tbody = h('tbody', {}, plan.plan.map(planRow));
  const note = h('p', { class: 'muted plan-more' });
  const moreButton = h('button', { type: 'button', class: 'plan-more-button' }, `Show the next ${PLAN_ROWS} runs`);
  let shown = plan.plan.length;
  let nextOffset = plan.page?.next_offset ?? null;
  const update = () => {
    note.textContent = shown < plan.runs ? `The first ${shown} of ${plan.runs} runs.` : '';
    moreButton.hidden = nextOffset === null || !next;
  };
  moreButton.addEventListener('click', async () => {
    moreButton.disabled = true;
    try {
      const page = await next(nextOffset);
      if (!page) return;
      if (page.runs !== plan.runs) {
        note.textContent = 'The plan changed (the hosts\' OSes?): plan again.';
        return;
      }
      tbody.append(...page.plan.map(planRow));
      shown += page.plan.length;
      nextOffset = page.page?.next_offset ?? null;
      update();
    } catch (err) {
      note.textContent = errorText(err, 'Could not get more runs');
    } finally {
      moreButton.disabled = false;
    }
  });
  update();
  replace(el,
    h('h2', {}, 'Plan'),
    h('p', { class: 'plan-summary' },
      h('strong', {}, `${plan.runs} run${plan.runs === 1 ? '' : 's'}`),
      ` in ${plan.cells} cell${plan.cells === 1 ? '' : 's'} · order ${plan.order}`,
      plan.order === 'shuffled' ? ` (seed ${plan.seed})` : '',
      plan.combinations ? ` · ${plan.combinations} OS combination${plan.combinations === 1 ? '' : 's'}` : '',
      plan.rounds < plan.runs ? ` · ${plan.rounds} round${plan.rounds === 1 ? '' : 's'} (runs on disjoint hosts go at once)` : '',
      ' · estimated ', h('strong', { class: 'plan-estimate' }, duration(plan.estimated_s * 1000)),
      h('span', { class: 'muted' }, ` (${plan.estimated_s} s)`)),
    h('p', { class: 'help plan-stale' }, 'The spec changed since this plan: plan again to see its runs.'),
    plan.boots?.length ? drawBoots(plan) : null,
    plan.rounds < plan.runs ? drawTimeline(plan) : null,
    h('div', { class: 'table-wrap' },
      h('table', { class: 'mx-table plan-table' },
        h('caption', { class: 'visually-hidden' }, 'The runs in the order they run'),
        h('thead', {}, h('tr', {},
          h('th', { scope: 'col' }, 'seq'),
          h('th', { scope: 'col' }, 'round'),
          h('th', { scope: 'col' }, 'client → server'),
          h('th', { scope: 'col' }, 'protocol'),
          h('th', { scope: 'col' }, 'direction'),
          h('th', { scope: 'col' }, 'iperf args'))),
        tbody)),
    note, moreButton);
  el.hidden = false;
}
