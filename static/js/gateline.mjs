// gateline.mjs - on the page of a matrix a schedule started: which spec and
// version, the CI gate's verdict against its baseline and the cells that
// fell, with a button that opens the comparison (compare.mjs) with the
// gate's own baseline, metric and allowed change.  The gate comes with the
// matrix (its `gate`, null for a matrix no schedule started: hidden), then
// from its matrix.gate event (it is judged after the matrix ends; the
// event's data is the gate's detail).  Text, never markup.

import { h, replace } from './dom.mjs';

const WORDS = {
  pass: 'passed the gate', fail: 'failed the gate', no_baseline: 'has no baseline to compare with',
  error: 'was not judged',
};

/** The line of a matrix's gate; onCompare({baseline, max_drop, metric}) opens the comparison. */
export function gateLine(onCompare) {
  const el = h('p', { class: 'mx-gate', hidden: true, role: 'status' });

  function draw(g) {
    const d = g.detail ?? {};
    const verdict = g.verdict ?? 'pending';
    const by = `Started by the schedule of ${g.spec} (version ${g.version}): `;
    const rule = d.metric ? `${d.metric}, drop ≤ ${d.max_drop} %` : null;
    let text;
    if (!g.verdict) text = 'the gate is judged when it ends.';
    else if (g.verdict === 'no_baseline') text = `${WORDS.no_baseline} (no earlier matrix of ${g.spec} passed).`;
    else if (g.verdict === 'error') text = `${WORDS.error}${d.message ? `: ${d.message}` : ''}.`;
    else {
      const n = d.dropped?.length ?? 0;
      text = `${WORDS[g.verdict]} against matrix ${g.baseline} (${rule}): ` + (g.verdict === 'pass'
        ? `${d.compared} cell${d.compared === 1 ? '' : 's'} compared, none worse.`
        : `${n} of ${d.compared} cell${d.compared === 1 ? '' : 's'} worse or failed (cell${n === 1 ? '' : 's'} ${d.dropped.join(', ')}).`);
    }
    el.dataset.verdict = verdict;
    el.className = `mx-gate gate-line-${verdict}`;
    const parts = [h('span', { class: `gate-square gate-${verdict}`, 'aria-hidden': 'true' }), ' ', by, text];
    if (g.baseline && (g.verdict === 'pass' || g.verdict === 'fail')) {
      parts.push(' ', h('button', {
        type: 'button', class: 'mx-gate-compare',
        onclick: () => onCompare({ baseline: String(g.baseline), max_drop: String(d.max_drop), metric: d.metric }),
      }, 'Show the comparison'));
    }
    replace(el, parts);
    el.hidden = false;
  }

  /** The gate as the matrix had it (null: no schedule started it). */
  function take(gate) {
    if (gate) draw(gate);
    else el.hidden = true;
  }

  /** Its matrix.gate event came (d: {spec, version, baseline, verdict, metric, max_drop, compared, dropped, message?}). */
  function judged(d) {
    draw({ spec: d.spec, version: d.version, baseline: d.baseline, verdict: d.verdict, detail: d });
  }

  return { el, take, judged };
}
