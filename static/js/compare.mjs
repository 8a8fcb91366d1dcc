// compare.mjs - the "Compare with a baseline" section of a matrix page: the
// CI gate (GET /api/v1/matrices/ID/compare) for a person.  Pick the baseline
// matrix (the recent ones are offered), the largest drop allowed and the
// metric; the table shows per cell both medians, the change and the verdict,
// and the exact tbctl and curl commands a CI job would run for the same gate.

import { api } from './api.mjs';
import { h, replace } from './dom.mjs';
import { bitrateNode, pairText } from './format.mjs';

const VERDICT_TEXT = {
  ok: 'ok', dropped: 'dropped', failed: 'failed', no_baseline: 'no baseline', new: 'new', missing: 'missing',
};

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
    h('option', { value: 'receiver_bps' }, 'receiver bitrate'), h('option', { value: 'sender_bps' }, 'sender bitrate'));
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Compare');
  const fieldMsg = h('p', { class: 'field-error', id: 'cmp-error', role: 'alert', hidden: true });
  const verdict = h('p', { class: 'cmp-verdict', role: 'status', hidden: true });
  const command = h('pre', { class: 'cmd cmp-command', hidden: true });
  const body = h('tbody');
  const table = h('table', { class: 'mx-table cmp-table', hidden: true },
    h('caption', { class: 'visually-hidden' }, 'Per cell: the baseline and this matrix\'s medians'),
    h('thead', {}, h('tr', {}, ['cell', 'client → server', 'protocol', 'direction', 'baseline (median)',
      'this matrix (median)', 'change', 'verdict'].map((c) => h('th', { scope: 'col' }, c)))),
    body);
  const form = h('form', { class: 'cmp-form', novalidate: true },
    h('div', { class: 'field' }, h('label', { for: 'cmp-baseline' }, 'Baseline matrix'), baseline, options,
      h('p', { class: 'help', id: 'cmp-baseline-help' }, 'The id of an earlier matrix of the same spec.')),
    h('div', { class: 'field' }, h('label', { for: 'cmp-max-drop' }, 'Largest drop allowed (%)'), maxDrop),
    h('div', { class: 'field' }, h('label', { for: 'cmp-metric' }, 'Metric'), metric),
    h('div', { class: 'field field-submit' }, submit));
  const el = h('section', { class: 'mx-compare', 'aria-labelledby': 'mx-compare-title' },
    h('h2', { id: 'mx-compare-title' }, 'Compare with a baseline'),
    h('p', { class: 'help' }, 'The CI gate: a cell fails when its median fell by more than the allowed drop, ' +
      'or when none of its runs succeeded.'),
    form, fieldMsg, verdict, h('div', { class: 'table-wrap' }, table), command);
  let shown = null;        // the query last compared {baseline, max_drop, metric}
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
      return showError('max_drop', 'The largest drop is a percentage from 0 to 100.');
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
      const { compare: c } = await api('GET', `matrices/${id}/compare?${query}`);
      if (mine !== asked) return;
      shown = q;
      draw(c, query);
    } catch (err) {
      if (err.status === 401 || mine !== asked) return;
      showError(err.field === 'max_drop' ? 'max_drop' : err.field === 'metric' ? 'metric' : 'baseline',
        err.status === 404 && err.field === 'baseline' ? `There is no matrix ${q.baseline}.` : err.message);
    } finally {
      if (mine === asked) submit.removeAttribute('aria-busy');
    }
  }

  function draw(c, query) {
    el.dataset.pass = String(c.pass);
    verdict.hidden = false;
    verdict.className = `cmp-verdict ${c.pass ? 'cmp-pass' : 'cmp-fail'}`;
    const bad = c.dropped.length;
    verdict.textContent = c.pass
      ? `Pass: ${c.compared} cell${c.compared === 1 ? '' : 's'} compared with matrix ${c.baseline}, none dropped by more than ${c.max_drop_pct} %.`
      : c.compared === 0 ? `Fail: no cell could be compared with matrix ${c.baseline} (no successful run in both).`
        : `Fail: ${bad} of ${c.compared} cells dropped by more than ${c.max_drop_pct} % or failed.`;
    if (c.state !== 'succeeded' || c.baseline_state !== 'succeeded') {
      verdict.textContent += ` (this matrix is ${c.state}, the baseline ${c.baseline_state})`;
    }
    table.hidden = false;
    replace(body, c.cells.map((r) => h('tr', { dataset: { verdict: r.verdict, cell: String(r.cell ?? '') } },
      h('td', { 'data-label': 'cell', class: 'num' }, r.cell === null ? '—' : String(r.cell)),
      h('td', { 'data-label': 'client → server', class: 'pair' }, pairText(r)),
      h('td', { 'data-label': 'protocol' }, r.protocol),
      h('td', { 'data-label': 'direction' }, r.direction),
      h('td', { 'data-label': 'baseline (median)', class: 'num' }, bitrateNode(r.baseline_median)),
      h('td', { 'data-label': 'this matrix (median)', class: 'num' }, bitrateNode(r.median)),
      h('td', { 'data-label': 'change', class: 'num cmp-change' },
        typeof r.change_pct === 'number' ? `${r.change_pct > 0 ? '+' : ''}${r.change_pct.toFixed(2)} %` : '—'),
      h('td', { 'data-label': 'verdict' }, h('span', { class: `pill pill-cmp-${r.verdict}` }, VERDICT_TEXT[r.verdict] ?? r.verdict)))));
    command.hidden = false;
    const url = new URL(`api/v1/matrices/${id}/compare?${query}`, location.href).href;
    command.textContent = `# the same gate from a CI job (exit 7 when it fails):\n` +
      `tbctl matrix compare ${id} --baseline ${c.baseline} --max-drop ${c.max_drop_pct}` +
      `${c.metric !== 'receiver_bps' ? '   # tbctl compares receiver_bps' : ''}\n` +
      `curl -sf -H "Authorization: Bearer $(cat "$TESTBEDD_TOKEN_FILE")" '${url}' | jq -e .compare.pass\n`;
  }

  return {
    el,
    refresh() { if (shown) compare(shown); },
  };
}
