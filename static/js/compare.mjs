// compare.mjs - the "Compare with a baseline" section of a matrix page: the
// CI gate and the A/B view (GET /api/v1/matrices/ID/compare) for a person.
// Pick the baseline matrix (the recent ones are offered), the largest change
// allowed and the metric (bitrates: a drop fails; loss, retransmits, jitter:
// a rise fails); the table shows per cell both medians with their
// interquartile ranges, the change, whether the IQRs overlap (a change
// beyond the spread of the repeats) and the verdict.  Beside it, what
// changed on the hosts between the two matrices (GET .../hosts/diff): kernel,
// NIC driver and firmware, offloads, congestion control, buffers.  Below,
// CSV of both, the A/B report, and the exact tbctl and curl commands a CI
// job would run for the same gate.  Under each side's median, what its runs
// cost their hosts and did to latency when they sampled (the cell's `load`,
// `baseline_load`: the busiest core's mean busy % per end and router, the
// loaded vs idle median RTT).

import { api } from './api.mjs';
import { h, replace } from './dom.mjs';
import { bitrate, bitrateNode, count, pairText, percent } from './format.mjs';

const VERDICT_TEXT = {
  ok: 'ok', dropped: 'dropped', failed: 'failed', no_baseline: 'no baseline', new: 'new', missing: 'missing',
};

const METRICS = [
  ['receiver_bps', 'receiver bitrate'], ['sender_bps', 'sender bitrate'],
  ['lost_percent', 'lost datagrams (UDP; higher is worse)'], ['retransmits', 'retransmits (TCP; higher is worse)'],
  ['jitter_ms', 'jitter (UDP; higher is worse)'],
];

/** A value of metric as a node. */
function valueNode(metric, v) {
  if (metric === 'receiver_bps' || metric === 'sender_bps') return bitrateNode(v);
  const text = metric === 'lost_percent' ? percent(v) : metric === 'retransmits' ? count(v)
    : typeof v === 'number' && Number.isFinite(v) ? `${v.toFixed(3)} ms` : '—';
  return h('span', { class: 'num' }, text);
}

/** A cell's load figures (ResultsCell.load) in one line, or null when none. */
function loadNode(l) {
  if (!l) return null;
  const pct = (v) => (typeof v === 'number' ? `${Math.round(v)} %` : null);
  const cpu = [['client', l.client_busiest_mean], ['server', l.server_busiest_mean], ['router', l.router_busiest_mean]]
    .filter(([, v]) => typeof v === 'number').map(([k, v]) => `${k} ${pct(v)}`);
  const ms = (v) => `${v.toFixed(2)} ms`;
  const rtt = typeof l.latency_load_median_ms === 'number'
    ? `RTT ${ms(l.latency_load_median_ms)}${typeof l.latency_idle_median_ms === 'number' ? ` (idle ${ms(l.latency_idle_median_ms)})` : ''}` : null;
  const parts = [cpu.length ? `busiest core ${cpu.join(', ')}` : null, rtt].filter(Boolean);
  return parts.length ? h('div', { class: 'cmp-load muted', title: 'median over the runs: the busiest core\'s mean busy %; the median RTT under load' }, parts.join('; ')) : null;
}

function iqrNode(metric, q1, q3) {
  if (typeof q1 !== 'number' || typeof q3 !== 'number') return '—';
  return h('span', { class: 'cmp-iqr' }, valueNode(metric, q1), ' – ', valueNode(metric, q3));
}

// The kind of a hosts-diff path, for a person scanning what changed.
function changeKind(path) {
  if (/^(release|kernel|freebsd_version|os)\b/.test(path)) return 'kernel / OS';
  if (/^nic\.offloads\./.test(path)) return 'offload';
  if (/^nic\.(driver|driver_version)/.test(path)) return 'NIC driver';
  if (/^nic\.firmware/.test(path)) return 'NIC firmware';
  if (/^tcp\.congestion/.test(path)) return 'congestion control';
  if (/^tcp\./.test(path)) return 'buffers';
  if (/^nic\./.test(path)) return 'NIC';
  if (/^shaping\./.test(path)) return 'link shaping';
  return 'other';
}

// A dummynet pipe as ipfw's words: "bw 20.0 Mbit/s, plr 0.02 (2 %), delay 0 ms, queue 50 sl."
function pipeText(p) {
  return [`bw ${p.bw_bps ? bitrate(p.bw_bps) : 'unlimited'}`,
    typeof p.plr === 'number' ? `plr ${p.plr} (${+(p.plr * 100).toFixed(2)} %)` : null,
    typeof p.delay_ms === 'number' ? `delay ${p.delay_ms} ms` : null,
    p.queue ? `queue ${p.queue}` : null].filter(Boolean).join(', ');
}

const shown = (v, path = '') => (v === null || v === undefined ? '—'
  : /^shaping\.pipes\.[^.]+$/.test(path) && typeof v === 'object' ? pipeText(v)
    : /^shaping\.qdiscs\./.test(path) && typeof v === 'object' && v.kind ? `${v.kind} ${v.options ?? ''}`.trim()
      : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** The section for matrix id; refresh() compares again (when runs ended) if a comparison is shown. */
export function compareSection(id) {
  const listId = `cmp-baselines-${id}`;
  const baseline = h('input', {
    id: 'cmp-baseline', name: 'baseline', type: 'number', min: 1, step: 1, required: true, inputmode: 'numeric',
    list: listId, 'aria-describedby': 'cmp-baseline-help',
  });
  const options = h('datalist', { id: listId });
  const maxDrop = h('input', { id: 'cmp-max-drop', name: 'max_drop', type: 'number', min: 0, max: 100, step: 'any', value: 5 });
  const metric = h('select', { id: 'cmp-metric', name: 'metric' },
    METRICS.map(([v, text]) => h('option', { value: v }, text)));
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Compare');
  const fieldMsg = h('p', { class: 'field-error', id: 'cmp-error', role: 'alert', hidden: true });
  const verdict = h('p', { class: 'cmp-verdict', role: 'status', hidden: true });
  const links = h('p', { class: 'downloads cmp-links', hidden: true });
  const command = h('pre', { class: 'cmd cmp-command', hidden: true });
  const body = h('tbody');
  const table = h('table', { class: 'mx-table cmp-table', hidden: true },
    h('caption', { class: 'visually-hidden' }, 'Per cell: the baseline and this matrix\'s medians, each with its interquartile range below'),
    h('thead', {}, h('tr', {}, ['cell', 'client → server', 'baseline', 'this matrix', 'change', 'IQRs overlap',
      'verdict'].map((c) => h('th', { scope: 'col' }, c)))),
    body);
  const diffBody = h('tbody');
  const diffNote = h('p', { class: 'muted cmp-diff-note' });
  const diff = h('section', { class: 'cmp-diff', 'aria-labelledby': 'cmp-diff-title', hidden: true },
    h('h3', { id: 'cmp-diff-title' }, 'What changed on the hosts'), diffNote,
    h('div', { class: 'table-wrap' }, h('table', { class: 'mx-table cmp-diff-table' },
      h('caption', { class: 'visually-hidden' }, 'Host metadata that differs between the baseline and this matrix'),
      h('thead', {}, h('tr', {}, ['host', 'what', 'baseline → now'].map((c) => h('th', { scope: 'col' }, c)))),
      diffBody)));
  const form = h('form', { class: 'cmp-form', novalidate: true },
    h('div', { class: 'field' }, h('label', { for: 'cmp-baseline' }, 'Baseline matrix'), baseline, options,
      h('p', { class: 'help', id: 'cmp-baseline-help' }, 'The id of an earlier matrix of the same spec.')),
    // "drop" for a bitrate; for loss, retransmits and jitter the same percentage bounds a rise
    h('div', { class: 'field' }, h('label', { for: 'cmp-max-drop' }, 'Largest drop allowed (%)'), maxDrop),
    h('div', { class: 'field' }, h('label', { for: 'cmp-metric' }, 'Metric'), metric),
    h('div', { class: 'field field-submit' }, submit));
  const el = h('section', { class: 'mx-compare', 'aria-labelledby': 'mx-compare-title' },
    h('h2', { id: 'mx-compare-title' }, 'Compare with a baseline (A/B)'),
    h('p', { class: 'help' }, 'The CI gate: a cell fails when its median got worse by more than the allowed change ' +
      '(a bitrate fell, loss, retransmits or jitter rose), or when none of its runs succeeded. ' +
      'A cell is beyond the spread when the interquartile ranges do not overlap and the medians differ by more than ' +
      'the allowed change: a difference that neither the noise of the repeats nor the allowance explains.'),
    form, fieldMsg, verdict,
    h('div', { class: 'cmp-side' }, h('div', { class: 'table-wrap cmp-main' }, table), diff),
    links, command);
  let shownQuery = null;   // the query last compared {baseline, max_drop, metric}
  let asked = 0;

  // The recent matrices as suggestions (the one shown excluded).
  api('GET', 'matrices?limit=50').then(({ matrices }) => {
    replace(options, matrices.filter((x) => x.id !== id).map((x) => h('option', { value: String(x.id) },
      `#${x.id} ${x.name} (${x.state})`)));
  }, () => {});

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const q = { baseline: baseline.value.trim(), max_drop: maxDrop.value.trim(), metric: metric.value };
    if (!/^[1-9]\d*$/.test(q.baseline)) return showError('baseline', 'Give the id of the baseline matrix (a positive integer).');
    if (q.max_drop === '' || !(Number(q.max_drop) >= 0 && Number(q.max_drop) <= 100)) {
      return showError('max_drop', 'The largest change is a percentage from 0 to 100.');
    }
    compare(q);
  });

  function showError(field, text) {
    fieldMsg.textContent = text;
    fieldMsg.hidden = false;
    const input = { baseline, max_drop: maxDrop, metric }[field];
    for (const x of [baseline, maxDrop, metric]) x.removeAttribute('aria-invalid');
    if (input) { input.setAttribute('aria-invalid', 'true'); input.focus(); }
  }

  async function compare(q) {
    const mine = ++asked;
    fieldMsg.hidden = true;
    for (const x of [baseline, maxDrop, metric]) x.removeAttribute('aria-invalid');
    submit.setAttribute('aria-busy', 'true');
    const query = `baseline=${encodeURIComponent(q.baseline)}&max_drop=${encodeURIComponent(q.max_drop)}&metric=${q.metric}`;
    try {
      const [{ compare: c }, d] = await Promise.all([
        api('GET', `matrices/${id}/compare?${query}`),
        api('GET', `matrices/${id}/hosts/diff?other=${encodeURIComponent(q.baseline)}`).catch(() => null),
      ]);
      if (mine !== asked) return;
      shownQuery = q;
      draw(c, query);
      drawDiff(d?.diff ?? null, c.baseline);
    } catch (err) {
      if (err.status === 401 || mine !== asked) return;
      showError(err.field === 'max_drop' ? 'max_drop' : err.field === 'metric' ? 'metric' : 'baseline',
        err.status === 404 && err.field === 'baseline' ? `There is no matrix ${q.baseline}.` : err.message);
    } finally {
      if (mine === asked) submit.removeAttribute('aria-busy');
    }
  }

  function draw(c, query) {
    const worse = c.higher_is_worse ? 'rose' : 'dropped';
    el.dataset.pass = String(c.pass);
    verdict.hidden = false;
    verdict.className = `cmp-verdict ${c.pass ? 'cmp-pass' : 'cmp-fail'}`;
    const bad = c.dropped.length;
    const apart = c.beyond_spread?.length ?? 0;
    verdict.textContent = (c.pass
      ? `Pass: ${c.compared} cell${c.compared === 1 ? '' : 's'} compared with matrix ${c.baseline}, none ${worse} by more than ${c.max_drop_pct} %.`
      : c.compared === 0 ? `Fail: no cell could be compared with matrix ${c.baseline} (no successful run in both).`
        : `Fail: ${bad} of ${c.compared} cells ${worse} by more than ${c.max_drop_pct} % or failed.`) +
      ` ${apart} cell${apart === 1 ? '' : 's'} beyond the spread (IQRs apart, a change over ${c.max_drop_pct} %).`;
    if (c.state !== 'succeeded' || c.baseline_state !== 'succeeded') {
      verdict.textContent += ` (this matrix is ${c.state}, the baseline ${c.baseline_state})`;
    }
    table.hidden = false;
    const m = c.metric;
    replace(body, c.cells.map((r) => h('tr', {
      dataset: {
        verdict: r.verdict, cell: String(r.cell ?? ''), overlap: String(r.overlap), beyond: String(r.beyond_spread), protocol: r.protocol,
      },
    },
    h('td', { 'data-label': 'cell', class: 'num' }, r.cell === null ? '—' : String(r.cell)),
    h('td', { 'data-label': 'measurement', class: 'pair' }, pairText(r),
      h('div', { class: 'muted' }, `${r.protocol} ${r.direction}`)),
    // a side's median, its interquartile range below it: seven columns fit beside the hosts diff
    h('td', { 'data-label': 'baseline', class: 'num cmp-base' }, h('span', { class: 'cmp-median' }, valueNode(m, r.baseline_median)),
      h('div', { class: 'cmp-iqr-cell muted' }, 'IQR ', iqrNode(m, r.baseline_q1, r.baseline_q3)), loadNode(r.baseline_load)),
    h('td', { 'data-label': 'this matrix', class: 'num cmp-now' }, h('span', { class: 'cmp-median' }, valueNode(m, r.median)),
      h('div', { class: 'cmp-iqr-cell muted' }, 'IQR ', iqrNode(m, r.q1, r.q3)), loadNode(r.load)),
    h('td', { 'data-label': 'change', class: 'num cmp-change' },
      typeof r.change_pct === 'number' ? `${r.change_pct > 0 ? '+' : ''}${r.change_pct.toFixed(2)} %` : '—'),
    h('td', { 'data-label': 'IQRs overlap', class: 'cmp-overlap' },
      r.overlap === true ? 'yes' : r.overlap !== false ? '—'
        : r.beyond_spread ? h('strong', {}, 'no: beyond spread') : 'no (within the allowed change)'),
    h('td', { 'data-label': 'verdict' }, h('span', { class: `pill pill-cmp-${r.verdict}` },
      r.verdict === 'dropped' && c.higher_is_worse ? 'worse' : VERDICT_TEXT[r.verdict] ?? r.verdict)))));
    links.hidden = false;
    replace(links, 'Download ',
      h('a', { href: `api/v1/matrices/${id}/compare?${query}&format=csv`, download: `matrix-${id}-vs-${c.baseline}-compare.csv`, class: 'cmp-csv' }, 'comparison CSV'), ' · ',
      h('a', { href: `api/v1/matrices/${id}/hosts/diff?other=${c.baseline}&format=csv`, download: `matrix-${id}-vs-${c.baseline}-hosts.csv`, class: 'cmp-diff-csv' }, 'hosts diff CSV'), ' · ',
      h('a', { href: `api/v1/matrices/${id}/report?baseline=${c.baseline}`, download: '', class: 'cmp-report' }, 'A/B report (HTML)'), ' · ',
      h('a', { href: `api/v1/matrices/${id}/report?baseline=${c.baseline}&format=md`, download: '', class: 'cmp-report-md' }, 'Markdown'));
    command.hidden = false;
    const url = new URL(`api/v1/matrices/${id}/compare?${query}`, location.href).href;
    command.textContent = `# the same gate from a CI job (exit 7 when it fails; --junit writes a JUnit XML report):\n` +
      `tbctl matrix compare ${id} --baseline ${c.baseline} --max-drop ${c.max_drop_pct}` +
      `${c.metric !== 'receiver_bps' ? ` --metric ${c.metric}` : ''} --spread --junit compare.xml\n` +
      `curl -sf -H "Authorization: Bearer $(cat "$TESTBEDD_TOKEN_FILE")" '${url}' | jq -e .compare.pass\n`;
  }

  function drawDiff(d, base) {
    diff.hidden = false;
    if (!d) {
      diffNote.textContent = `The hosts diff with matrix ${base} could not be read.`;
      replace(diffBody);
      return;
    }
    const rows = [];
    for (const host of d.hosts) {
      if (host.in !== 'both') {
        rows.push(h('tr', { dataset: { kind: 'host' } }, h('td', { 'data-label': 'host' }, `${host.host}@${host.os}`,
          h('div', { class: 'muted' }, 'host')), h('td', { 'data-label': 'what', colspan: 2 },
          host.in === 'matrix' ? 'only in this matrix' : 'only in the baseline')));
        continue;
      }
      for (const x of host.differences) {
        // three columns, to fit beside the comparison: the kind under the host, the values under the path
        rows.push(h('tr', { dataset: { kind: changeKind(x.path) } },
          h('td', { 'data-label': 'host' }, `${host.host}@${host.os}`, h('div', { class: 'muted cmp-diff-kind' }, changeKind(x.path))),
          // a path breaks at its dots only
          h('td', { 'data-label': 'what' }, h('code', {}, x.path.split('.').flatMap((p, i) => (i ? [h('wbr'), `.${p}`] : [p])))),
          h('td', { 'data-label': 'baseline → now' }, h('span', { class: 'cmp-diff-val cmp-diff-was' }, shown(x.other, x.path)),
            ' → ', h('span', { class: 'cmp-diff-val cmp-diff-now' }, shown(x.matrix, x.path)))));
      }
    }
    diffNote.textContent = rows.length === 0
      ? (d.hosts.length === 0 ? 'Neither matrix has host snapshots.' : `Nothing changed on the hosts since matrix ${base}.`)
      : `${rows.length} difference${rows.length === 1 ? '' : 's'} against matrix ${base}.`;
    replace(diffBody, rows);
    diff.querySelector('.table-wrap').hidden = rows.length === 0;
  }

  return {
    el,
    refresh() { if (shownQuery) compare(shownQuery); },
    /** Compare with q = {baseline, max_drop, metric} (a scheduled matrix's gate), the form filled in. */
    show(q) {
      baseline.value = q.baseline;
      maxDrop.value = q.max_drop;
      if (q.metric) metric.value = q.metric;
      compare({ baseline: baseline.value, max_drop: maxDrop.value, metric: metric.value });
      el.scrollIntoView({ block: 'start' });
    },
  };
}
