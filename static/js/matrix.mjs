// matrix.mjs - one matrix (#/matrices/ID): its state and progress, the run
// in progress with its live bitrate, Cancel / Resume / Rerun, the results
// table filling in as runs end and the summary per cell.
//
// The page opens its own event stream (GET /api/v1/events?matrix=ID:
// matrix.state, run.state, run.interval) before it fetches the matrix, and
// applies what arrives meanwhile after the fetch, so nothing falls between
// the two.  An event may still be older than the fetched state, so a run's
// state never goes back (pending < running < ended) and neither does the
// matrix's; only a resume (an ended matrix queued again) sends them back,
// and that makes the page fetch everything again.  OS personas and the
// per-cell summary are not in the events: /results is fetched again when a
// run ends.

import { api } from './api.mjs';
import { compareSection } from './compare.mjs';
import { hostsSection } from './hostmeta.mjs';
import { announce, h, replace } from './dom.mjs';
import {
  bitrate, bitrateNode, count, errorText, MATRIX_ENDED, operatorOnly, pairText, percent, RUN_ENDED,
  specText, statePill,
} from './format.mjs';
import { ResultsGrid } from './grid.mjs';
import { LiveCharts } from './livecharts.mjs';
import { LiveStream } from './live.mjs';
import { RunDialog } from './run.mjs';
import { absolute, duration, since } from './time.mjs';

const MATRIX_RANK = { queued: 0, running: 1 };    // every other state: 2 (ended)
const RUN_RANK = { pending: 0, running: 1 };       // every other state: 2 (ended)
const mrank = (s) => MATRIX_RANK[s] ?? 2;
const rrank = (s) => RUN_RANK[s] ?? 2;
const RUN_EVENT_KEYS = ['state', 'error_class', 'error_message', 'sender_bps', 'receiver_bps', 'retransmits',
  'lost_percent', 'client_command', 'server_command'];
const RUN_ROW_KEYS = [...RUN_EVENT_KEYS, 'client_os', 'server_os', 'started_at', 'finished_at', 'attempts'];

export function renderMatrix(main, ctx, id) {
  let m = null;                 // the matrix (without runs)
  let progressAt = 0;           // when m.progress arrived (Date.now())
  let waitingFor = null;        // why a queued matrix waits (matrix.state "waiting_for")
  const runs = new Map();       // run id -> {r, tr}
  const bySeq = new Map();      // seq -> run id
  const rates = new Map();      // run id -> {client, server}: the latest interval of each side
  const versions = new Map();   // run id -> {client_version, server_version} (or a pending fetch)
  let current = null;           // the id of the run shown as the current one
  let loaded = false;
  let queue = [];
  let generation = 0;
  let resultsAsked = 0;
  let resultsTimer = null;
  const canOperate = ctx.canOperate();

  const title = h('h1', { class: 'mx-title' }, `Matrix ${id}`);
  const pill = h('span', { class: 'mx-state' });
  const meta = h('p', { class: 'muted mx-meta' });
  const status = h('p', { class: 'muted', role: 'status' }, 'Loading the matrix…');
  const streamNote = h('p', { class: 'help stream-note', hidden: true });
  const bar = h('progress', { class: 'mx-progress', max: 1, value: 0, 'aria-labelledby': 'mx-progress-text' });
  const barText = h('p', { id: 'mx-progress-text', class: 'mx-progress-text' });
  const notice = h('p', { class: 'mx-notice', hidden: true });
  const msg = h('p', { class: 'alert', role: 'alert', hidden: true });
  const button = (label, cls, what) => h('button', {
    type: 'button', class: cls, hidden: true, disabled: !canOperate, title: canOperate ? null : operatorOnly(ctx, what),
  }, label);
  const cancelB = button('Cancel', 'danger mx-cancel', 'Canceling a matrix');
  const resumeB = button('Resume', 'primary mx-resume', 'Resuming a matrix');
  const rerunB = button('Rerun', 'mx-rerun', 'Rerunning a matrix');
  const cur = {
    el: h('section', { class: 'mx-current', 'aria-labelledby': 'mx-current-title', hidden: true }),
    title: h('h2', { id: 'mx-current-title' }, 'Now running'),
    run: h('p', { class: 'mx-current-run' }),
    what: h('span', { class: 'live-what' }),
    bps: h('span', { class: 'live-bps' }),
    at: h('span', { class: 'live-at muted' }),
    note: h('p', { class: 'help live-note', hidden: true }),
  };
  const charts = new LiveCharts();
  replace(cur.el, cur.title, cur.run, h('p', { class: 'live-rate' }, cur.what, ' ', cur.bps, ' ', cur.at), cur.note,
    charts.el);
  const grid = new ResultsGrid((cell) => {
    const mine = [...runs.values()].map((row) => row.r).filter((r) => r.cell === cell);
    const pick = mine.filter((r) => RUN_ENDED.has(r.state)).sort((a, b) => b.seq - a.seq)[0]
      ?? mine.find((r) => r.state === 'running') ?? mine[0];
    if (pick) dialog.open(pick);
  });
  const runsBody = h('tbody');
  const cellsBody = h('tbody');
  const cellsHead = h('tr');
  const cellsNote = h('p', { class: 'muted' }, 'No run has ended yet.');
  const spec = h('pre', { class: 'cmd spec-view' });
  const dialog = new RunDialog();
  const comparison = compareSection(id);
  const hostsMeta = hostsSection(id);
  const bootsBody = h('tbody');
  const bootsEl = h('section', { class: 'mx-boots', 'aria-labelledby': 'mx-boots-title', hidden: true },
    h('h2', { id: 'mx-boots-title' }, 'Boots'),
    h('p', { class: 'help' }, 'The OS combinations need these boots; each is a boot action, with its steps and exact commands on the Hosts page.'),
    h('div', { class: 'table-wrap' }, h('table', { class: 'mx-table boots-table' },
      h('caption', { class: 'visually-hidden' }, 'The boots this matrix did'),
      h('thead', {}, h('tr', {}, ['host', 'from → to', 'for', 'state', 'action', 'error'].map((c) => h('th', { scope: 'col' }, c)))),
      bootsBody)));
  let booting = null;           // the boot in progress {host, os, action} (matrix.boot events)
  const csv = (view) => h('a', {
    href: `api/v1/matrices/${id}/results?format=csv&view=${view}`, download: `matrix-${id}-${view}.csv`,
    class: `csv-${view}`,
  }, `CSV (${view})`);
  const body = h('div', { class: 'mx-body', hidden: true },
    h('section', { class: 'mx-status', 'aria-label': 'Progress' },
      bar, barText, notice,
      h('div', { class: 'mx-buttons' }, cancelB, resumeB, rerunB),
      canOperate ? null : h('p', { class: 'help' }, `${operatorOnly(ctx, 'Canceling, resuming or rerunning a matrix')}.`),
      msg),
    cur.el,
    bootsEl,
    grid.el,
    h('section', { class: 'mx-runs', 'aria-labelledby': 'mx-runs-title' },
      h('div', { class: 'section-head' }, h('h2', { id: 'mx-runs-title' }, 'Runs'),
        h('span', { class: 'downloads' }, 'Download ', csv('runs'), ' · ', csv('cells'))),
      h('div', { class: 'table-wrap' },
        h('table', { class: 'mx-table runs-table' },
          h('caption', { class: 'visually-hidden' }, 'Every run in order; a run\'s seq opens its commands'),
          h('thead', {}, h('tr', {}, ['seq', 'client → server', 'protocol', 'direction', 'state', 'sender', 'receiver',
            'retransmits', 'UDP loss', 'error'].map((c) => h('th', { scope: 'col' }, c)))),
          runsBody))),
    h('section', { class: 'mx-cells', 'aria-labelledby': 'mx-cells-title' },
      h('h2', { id: 'mx-cells-title' }, 'Per cell'),
      h('p', { class: 'help' }, 'A cell is one combination of pair, protocol, direction and swept values; the medians are of its ok runs.'),
      cellsNote,
      h('div', { class: 'table-wrap' },
        h('table', { class: 'mx-table cells-table', hidden: true },
          h('caption', { class: 'visually-hidden' }, 'Summary per cell'),
          h('thead', {}, cellsHead), cellsBody))),
    hostsMeta.el,
    comparison.el,
    h('details', { class: 'mx-spec' }, h('summary', {}, 'Spec'), spec));

  replace(main,
    h('p', { class: 'crumbs' }, h('a', { href: '#/matrices' }, 'Matrices'), ' / ', `#${id}`),
    h('div', { class: 'page-head' }, title, pill),
    meta, status, streamNote, body, dialog.el);

  // ---------------------------------------------------------------- loading

  async function load() {
    const mine = ++generation;
    loaded = false;
    try {
      const reply = await api('GET', `matrices/${id}`);
      if (mine !== generation) return;
      const { runs: list, ...matrix } = reply.matrix;
      runs.clear();
      bySeq.clear();
      rates.clear();      // run ids outlive a resume: an earlier attempt's intervals are not this one's
      charts.clear();
      replace(runsBody, list.sort((a, b) => a.seq - b.seq).map((r) => {
        const row = { r, tr: h('tr', { dataset: { run: String(r.id), seq: String(r.seq) } }) };
        // A click anywhere on the row opens the run too (the seq button is the keyboard's way).
        row.tr.addEventListener('click', (e) => { if (!e.target.closest('button, a')) dialog.open(row.r); });
        runs.set(r.id, row);
        bySeq.set(r.seq, r.id);
        drawRow(row);
        return row.tr;
      }));
      for (const row of runs.values()) if (row.r.state === 'running') charts.show(row.r);
      m = null;
      setMatrix(matrix);
      current = null;
      pickCurrent(matrix.progress?.current_seq);
      status.hidden = true;
      body.hidden = false;
      loaded = true;
      const pending = queue;
      queue = [];
      for (const ev of pending) apply(ev);
      drawAll();
      if (list.some((r) => RUN_ENDED.has(r.state))) loadResults(0);
    } catch (err) {
      if (mine !== generation || err.status === 401) return;
      replace(status, err.status === 404 ? `There is no matrix ${id}: ` : `Could not load matrix ${id}: ${err.message}. `,
        h('a', { href: '#/matrices' }, 'see the list of matrices'), '.');
      status.className = 'alert';
      status.hidden = false;
    }
  }

  /** GET /results after ms (one fetch for runs that end together): OS personas and the cells. */
  function loadResults(ms = 300) {
    clearTimeout(resultsTimer);
    resultsTimer = setTimeout(async () => {
      const ask = ++resultsAsked;
      const mine = generation;
      try {
        const t = await api('GET', `matrices/${id}/results`);
        if (ask !== resultsAsked || mine !== generation) return;
        for (const r of t.runs) updateRun(r.id, r, RUN_ROW_KEYS);
        drawCells(t.cells.filter(Boolean));
        grid.draw(t.cells, t.runs);
        comparison.refresh();
        hostsMeta.refresh();
      } catch (err) {
        if (err.status === 401 || ask !== resultsAsked) return;
        cellsNote.textContent = `Could not load the results: ${err.message}`;
        cellsNote.className = 'alert';
      }
    }, ms);
  }

  // ---------------------------------------------------------------- events

  function apply(ev) {
    const d = ev.data;
    if (d.matrix !== id) return;
    if (ev.type === 'matrix.state') {
      if (m && mrank(m.state) === 2 && mrank(d.state) < 2) {   // resumed: its runs go back to pending
        load();
        return;
      }
      setMatrix(d);
      if (d.progress) pickCurrent(d.progress.current_seq);
      drawAll();
      if (MATRIX_ENDED.has(m.state)) {
        loadResults(0);
        refreshMatrix();
      }
    } else if (ev.type === 'run.state') {
      if (!runs.has(d.run)) { load(); return; }
      const before = runs.get(d.run).r.state;
      updateRun(d.run, d, RUN_EVENT_KEYS);
      if (d.state === 'running') {
        current = d.run;
        charts.show(runs.get(d.run).r);
      } else if (RUN_ENDED.has(d.state)) {
        charts.ended(runs.get(d.run).r);
      }
      if (RUN_ENDED.has(d.state) && !RUN_ENDED.has(before)) loadResults();
      if (dialog.runId === d.run) dialog.refresh();
      drawCurrent();
    } else if (ev.type === 'matrix.boot') {
      booting = d.state === 'running' ? { host: d.host, os: d.os, action: d.action } : null;
      refreshMatrix();
      drawCurrent();
    } else if (ev.type === 'run.interval') {
      const iv = d.interval ?? {};
      const r = rates.get(d.run) ?? {};
      r[d.side] = { bps: iv.sum?.bits_per_second, n: d.n, start: iv.start, end: iv.end, omitted: iv.omitted };
      rates.set(d.run, r);
      if (runs.get(d.run)?.r.state !== 'running' && !RUN_ENDED.has(runs.get(d.run)?.r.state)) {
        updateRun(d.run, { state: 'running' }, ['state']);
      }
      current = d.run;
      if (runs.has(d.run)) charts.interval(runs.get(d.run).r, d.side, d.n, iv);
      drawCurrent();
    }
  }

  /** Take a matrix (or a matrix.state event's fields), unless it is older than what is shown. */
  function setMatrix(d) {
    if (m) {
      if (mrank(d.state) < mrank(m.state)) return;
      if (d.progress && m.progress && mrank(d.state) === mrank(m.state) && d.progress.done < m.progress.done) return;
    }
    m = { ...(m ?? {}), ...d };
    if (d.progress) progressAt = Date.now();
    waitingFor = d.state === 'queued' ? (d.waiting_for ?? (d.progress ? null : waitingFor)) : null;
  }

  /** The matrix's own fields (finished_at, error) once it ended. */
  async function refreshMatrix() {
    const mine = generation;
    try {
      const { matrix } = await api('GET', `matrices/${id}?runs=0`);
      if (mine === generation) { setMatrix(matrix); drawAll(); }
    } catch { /* the events said enough */ }
  }

  function updateRun(runId, d, keys) {
    const row = runs.get(runId);
    if (!row || rrank(d.state ?? row.r.state) < rrank(row.r.state)) return;
    for (const k of keys) if (k in d) row.r[k] = d[k];
    drawRow(row);
  }

  function pickCurrent(seq) {
    if (seq !== null && seq !== undefined && bySeq.has(seq)) current = bySeq.get(seq);
    else if (current === null) current = [...runs.values()].find((x) => x.r.state === 'running')?.r.id ?? null;
  }

  // ---------------------------------------------------------------- drawing

  function drawBoots() {
    const boots = m?.boots ?? [];
    bootsEl.hidden = boots.length === 0;
    replace(bootsBody, boots.map((b) => h('tr', { dataset: { state: b.state, host: b.host } },
      h('td', { 'data-label': 'host' }, b.host),
      h('td', { 'data-label': 'from → to' }, `${b.from ?? 'off'} → ${b.to}`),
      h('td', { 'data-label': 'for' }, b.before_seq === null ? 'after the last run' : `run ${b.before_seq}`),
      h('td', { 'data-label': 'state', class: 'state-cell' }, statePill(b.state)),
      h('td', { 'data-label': 'action', class: 'num' }, b.action ? `#${b.action}` : '—'),
      h('td', { 'data-label': 'error', class: ['error-cell', !b.error && 'na'] }, b.error ?? '—'))));
  }

  function drawAll() {
    drawBoots();
    drawHead();
    drawProgress();
    drawButtons();
    drawCurrent();
  }

  function drawHead() {
    document.title = `${m.name} · Matrices · testbedd`;
    title.textContent = m.name;
    replace(pill, statePill(m.state));
    main.dataset.matrixState = m.state;
    meta.textContent = [
      `#${m.id}`,
      m.actor ? `by ${m.actor}` : null,
      m.created_at ? `created ${since(m.created_at) ?? '?'} ago (${absolute(m.created_at)})` : null,
      m.estimated_s ? `estimated ${duration(m.estimated_s * 1000)}` : null,
      m.spec?.order === 'shuffled' ? `seed ${m.seed}` : null,
    ].filter(Boolean).join(' · ');
    if (m.rerun_of) meta.append(' · rerun of ', h('a', { href: `#/matrices/${m.rerun_of}` }, `#${m.rerun_of}`));
    if (m.spec && !spec.textContent) spec.textContent = specText(m.spec);
  }

  function drawProgress() {
    const p = m.progress ?? {};
    const ticking = m.state === 'running';
    const gone = ticking ? (Date.now() - progressAt) / 1000 : 0;
    bar.max = Math.max(p.total ?? 0, 1);
    bar.value = p.done ?? 0;
    const parts = [`${p.done ?? 0} of ${p.total ?? 0} runs done`];
    const counts = ['ok', 'failed', 'canceled', 'interrupted'].filter((k) => p[k]).map((k) => `${p[k]} ${k}`);
    if (counts.length) parts[0] += ` (${counts.join(', ')})`;
    if (p.elapsed_s || ticking) parts.push(`${duration(((p.elapsed_s ?? 0) + gone) * 1000)} elapsed`);
    if (!MATRIX_ENDED.has(m.state) && p.remaining_s !== undefined) {
      parts.push(`about ${duration(Math.max((p.remaining_s ?? 0) - gone, 0) * 1000)} left`);
    }
    barText.textContent = parts.join(' · ');
    const why = m.state === 'queued' ? (waitingFor ? `Waiting: ${waitingFor}` : 'Queued: it starts when the runner is free.')
      : m.error && MATRIX_ENDED.has(m.state) && m.state !== 'succeeded' ? `${m.error.message}` : null;
    notice.hidden = !why;
    notice.textContent = why ?? '';
  }

  function drawButtons() {
    const focused = document.activeElement;
    cancelB.hidden = !(m.state === 'queued' || m.state === 'running');
    resumeB.hidden = !(m.state === 'canceled' || m.state === 'interrupted');
    rerunB.hidden = !MATRIX_ENDED.has(m.state);
    // The button that had the focus went away: keep the focus on the page.
    if (focused instanceof HTMLButtonElement && focused.hidden) [cancelB, resumeB, rerunB].find((b) => !b.hidden)?.focus();
  }

  function drawCurrent() {
    const running = m && !MATRIX_ENDED.has(m.state);
    cur.el.hidden = !running;
    if (!running) return;
    const row = current !== null ? runs.get(current) : null;
    if (booting) {
      cur.title.textContent = 'Booting';
      cur.run.textContent = `${booting.host} into ${booting.os}` + (booting.action ? ` (boot action #${booting.action})` : '') +
        ' for the next runs…';
      cur.what.textContent = '';
      cur.bps.textContent = '';
      cur.at.textContent = '';
      return;
    }
    if (!row) {
      delete cur.el.dataset.run;
      cur.title.textContent = 'Now running';
      cur.run.textContent = m.state === 'queued' ? 'Nothing yet: the matrix is queued.' : 'Starting the next run…';
      cur.what.textContent = '';
      cur.bps.textContent = '';
      cur.at.textContent = '';
      return;
    }
    const r = row.r;
    const p = m.progress ?? {};
    cur.el.dataset.run = String(r.id);
    cur.el.dataset.seq = String(r.seq);
    cur.title.textContent = r.state === 'running' ? 'Now running' : r.state === 'pending' ? 'Starting' : 'Last run';
    const commands = h('button', { type: 'button', class: 'link-quiet' }, 'Commands');
    commands.addEventListener('click', () => dialog.open(r));
    // the round (runs of a round go at once): "round 3 of 6, 2 runs at once"
    const all = [...runs.values()].map((x) => x.r);
    const rounds = all.length ? Math.max(...all.map((x) => x.round ?? x.seq)) + 1 : 0;
    const together = all.filter((x) => (x.round ?? x.seq) === (r.round ?? r.seq)).length;
    replace(cur.run, `seq ${r.seq} (${r.seq + 1} of ${p.total ?? runs.size}) `,
      h('span', { class: 'mx-round' }, `· round ${(r.round ?? r.seq) + 1} of ${rounds}${together > 1 ? `, ${together} runs at once` : ''} `),
      statePill(r.state), ' ', commands);
    cur.what.textContent = `${pairText(r)} ${r.protocol} ${r.direction}:`;
    const v = askVersions(r);
    // iperf3 before 3.17 has no --json-stream: testbedd runs its client with -J,
    // which prints every interval only when the client ends.
    const clientAtEnd = !streams(v?.client_version);
    cur.note.hidden = !(clientAtEnd && v?.client_version && r.state === 'running');
    cur.note.textContent = `${r.client}'s iperf3 ${v?.client_version} reports its intervals only when it ends ` +
      '(live client intervals need iperf3 3.17 or later); the server\'s are live.';
    const rate = rates.get(r.id);
    if (!rate) {
      cur.bps.textContent = r.state === 'running' ? 'waiting for the first interval…'
        : r.state === 'pending' ? 'starting the iperf3 server…' : '';
      cur.at.textContent = '';
      return;
    }
    const side = (name) => [`${name} `, h('strong', {}, rate[name] ? bitrate(rate[name].bps)
      : name === 'client' && clientAtEnd && v?.client_version ? 'at the end' : '…')];
    replace(cur.bps, side('client'), ' · ', side('server'));
    const last = [rate.client, rate.server].filter(Boolean).sort((a, b) => (b.end ?? 0) - (a.end ?? 0))[0];
    cur.at.textContent = last ? `(${fmtS(last.start)}–${fmtS(last.end)} s${last.omitted ? ', omitted' : ''})` : '';
  }

  /** The iperf3 versions of run r (and its OS personas), fetched once (null until they are known). */
  function askVersions(r) {
    const known = versions.get(r.id);
    if (known !== undefined) return known;
    versions.set(r.id, null);
    api('GET', `runs/${r.id}`).then(({ run }) => {
      if (!run.client_version) { versions.delete(r.id); return; }   // not started yet: ask again later
      versions.set(r.id, { client_version: run.client_version, server_version: run.server_version });
      updateRun(r.id, run, ['client_os', 'server_os']);   // run.state events do not say
      if (current === r.id) drawCurrent();
    }, () => versions.delete(r.id));
    return null;
  }

  function drawRow(row) {
    const { r, tr } = row;
    tr.dataset.state = r.state;
    const open = h('button', { type: 'button', class: 'link run-open', 'aria-label': `Run ${r.seq}: commands and raw output` },
      String(r.seq));
    open.addEventListener('click', () => dialog.open(r));
    const udp = r.protocol === 'udp';
    replace(tr,
      h('td', { 'data-label': 'seq', class: 'num' }, open),
      h('td', { 'data-label': 'client → server', class: 'pair' }, pairText(r)),
      h('td', { 'data-label': 'protocol' }, r.protocol),
      h('td', { 'data-label': 'direction' }, r.direction),
      h('td', { 'data-label': 'state', class: 'state-cell' }, statePill(r.state)),
      h('td', { 'data-label': 'sender', class: 'num sender' }, bitrateNode(r.sender_bps)),
      h('td', { 'data-label': 'receiver', class: 'num receiver' }, bitrateNode(r.receiver_bps)),
      h('td', { 'data-label': 'retransmits', class: ['num', udp && 'na'] }, udp ? '—' : count(r.retransmits)),
      h('td', { 'data-label': 'UDP loss', class: ['num', !udp && 'na'] }, udp ? percent(r.lost_percent) : '—'),
      h('td', { 'data-label': 'error', class: ['error-cell', !r.error_class && 'na'], title: r.error_message ?? null },
        r.error_class ? h('code', { class: 'code' }, r.error_class) : '—'));
  }

  function drawCells(cells) {
    const swept = sweptKeys(cells);
    cellsNote.hidden = cells.length > 0;
    cellsNote.className = 'muted';
    cellsBody.closest('table').hidden = cells.length === 0;
    replace(cellsHead, ['cell', 'client → server', 'protocol', 'direction', swept.length ? 'swept' : null, 'n',
      'sender (median)', 'receiver (median)'].filter(Boolean).map((c) => h('th', { scope: 'col' }, c)));
    replace(cellsBody, cells.map((c) => h('tr', { dataset: { cell: String(c.cell) } },
      h('td', { 'data-label': 'cell', class: 'num' }, String(c.cell)),
      h('td', { 'data-label': 'client → server', class: 'pair' }, pairText(c)),
      h('td', { 'data-label': 'protocol' }, c.protocol),
      h('td', { 'data-label': 'direction' }, c.direction),
      swept.length ? h('td', { 'data-label': 'swept' }, h('code', {}, swept.filter((k) => c.params?.[k] != null).map((k) => `${k}=${c.params[k]}`).join(' '))) : null,
      h('td', { 'data-label': 'n', class: 'num n', title: `${c.n} ok of ${c.runs} runs${c.failed ? `, ${c.failed} failed` : ''}` },
        `${c.n}`, c.runs !== c.n ? h('span', { class: 'muted' }, ` of ${c.runs}`) : null),
      h('td', { 'data-label': 'sender (median)', class: 'num sender' }, bitrateNode(c.sender_bps?.median)),
      h('td', { 'data-label': 'receiver (median)', class: 'num receiver' }, bitrateNode(c.receiver_bps?.median)))));
  }

  // ---------------------------------------------------------------- buttons

  async function act(b, path, done) {
    msg.hidden = true;
    b.disabled = true;
    b.setAttribute('aria-busy', 'true');
    try {
      done(await api('POST', `matrices/${id}/${path}`));
    } catch (err) {
      if (err.status === 401) return;
      msg.textContent = errorText(err, `Not done (${path})`);
      msg.hidden = false;
    } finally {
      b.disabled = !canOperate;
      b.removeAttribute('aria-busy');
    }
  }
  cancelB.addEventListener('click', () => act(cancelB, 'cancel', (reply) => {
    announce(`Matrix ${id}: cancel requested`);
    setMatrix(reply.matrix);
    drawAll();
  }));
  resumeB.addEventListener('click', () => act(resumeB, 'resume', () => {
    announce(`Matrix ${id} resumed`);
    load();
  }));
  rerunB.addEventListener('click', () => act(rerunB, 'rerun', (reply) => {
    announce(`Matrix ${reply.matrix.id} started: a rerun of ${id}`);
    location.hash = `#/matrices/${reply.matrix.id}`;
  }));

  // ---------------------------------------------------------------- the stream

  const live = new LiveStream(['matrix.state', 'matrix.boot', 'run.state', 'run.interval'], { matrix: id });
  const onEvent = (e) => { if (loaded) apply(e.detail); else queue.push(e.detail); };
  const onReset = () => { queue = []; load(); };
  const onState = (e) => {
    streamNote.hidden = e.detail === 'live' || e.detail === 'connecting';
    streamNote.textContent = 'The live updates of this matrix are reconnecting…';
  };
  for (const t of ['matrix.state', 'matrix.boot', 'run.state', 'run.interval']) live.addEventListener(t, onEvent);
  live.addEventListener('reset', onReset);
  live.addEventListener('state', onState);
  live.start();
  live.whenOpen(2000).then(() => { if (generation === 0) load(); });
  const ticker = setInterval(() => { if (loaded && m?.state === 'running') drawProgress(); }, 1000);

  return () => {
    generation += 1;
    clearInterval(ticker);
    clearTimeout(resultsTimer);
    live.stop();
    if (dialog.el.open) dialog.el.close();
    delete main.dataset.matrixState;
  };
}

/** Whether iperf3 version v ("3.12", "3.17.1") has --json-stream (3.17+); unknown: true. */
function streams(v) {
  const m = /^(\d+)\.(\d+)/.exec(v ?? '');
  if (!m) return true;
  return Number(m[1]) > 3 || (Number(m[1]) === 3 && Number(m[2]) >= 17);
}

function fmtS(v) {
  return typeof v === 'number' ? v.toFixed(1) : '?';
}

/**
 * The params whose values differ between cells of the same protocol (the
 * swept ones): udp_bitrate is null on TCP cells and set on UDP ones, which
 * is no sweep.
 */
function sweptKeys(cells) {
  if (cells.length < 2) return [];
  const keys = new Set(cells.flatMap((c) => Object.keys(c.params ?? {})));
  keys.delete('protocol');       // columns of their own
  keys.delete('direction');
  const protocols = [...new Set(cells.map((c) => c.params?.protocol ?? c.protocol))];
  return [...keys].filter((k) => protocols.some((p) => new Set(cells
    .filter((c) => (c.params?.protocol ?? c.protocol) === p)
    .map((c) => JSON.stringify(c.params?.[k] ?? null))).size > 1));
}
