// schedules.mjs - the schedules on the matrices page: each spec's cron
// pattern, its next time and its last verdicts as a row of coloured squares,
// newest right (MaDDash's view of a recurring test).  Each square links to
// its matrix; its colour is the CI gate's verdict (pass, fail, no_baseline,
// error) or "pending" while the matrix runs.  When a schedule's last time
// started no matrix (a host reserved by someone else, one that did not power
// on), a line under its row says when and why, until a time starts one.
// Text, never markup.

import { api } from './api.mjs';
import { h, replace } from './dom.mjs';
import { absolute } from './time.mjs';

const LABEL = {
  pass: 'passed the gate', fail: 'failed the gate', no_baseline: 'no baseline to compare with',
  error: 'not judged (canceled, interrupted or not comparable)',
};

/** One square: a link to the matrix, its verdict in words for a screen reader. */
function square(g) {
  const verdict = g.verdict ?? 'pending';
  const words = `matrix ${g.matrix}: ${LABEL[verdict] ?? 'running'}${g.baseline ? ` (baseline ${g.baseline})` : ''}`;
  return h('a', {
    class: `gate-square gate-${verdict}`, href: `#/matrices/${g.matrix}`, title: words, 'aria-label': words,
  });
}

/** Why s's last time started no matrix: a line under its row, or nothing. */
function failure(s) {
  const f = s.last_failure;
  if (!f) return [];
  return [h('tr', { class: 'schedule-failure', dataset: { scheduleFailure: s.name } },
    h('td', { colspan: 5, role: 'note' }, 'Not started at ',
      h('time', { datetime: f.at, title: absolute(f.at) }, absolute(f.at)), `: ${f.message}`))];
}

function rows(s) {
  const baseline = s.baseline === 'latest-passing' ? 'latest passing' : `matrix ${s.baseline}`;
  return [h('tr', { dataset: { schedule: s.name } },
    h('th', { scope: 'row' }, h('a', { href: `#/matrices?name=${encodeURIComponent(s.name)}` }, s.name)),
    h('td', {}, h('code', {}, s.cron)),
    h('td', {}, s.next_at ? h('time', { datetime: s.next_at, title: absolute(s.next_at) }, absolute(s.next_at)) : 'never'),
    h('td', {}, `${s.metric}, drop ≤ ${s.max_drop} % vs ${baseline}`),
    h('td', { class: 'gate-row' }, s.last.length ? s.last.map(square) : h('span', { class: 'muted' }, 'none yet'))),
  ...failure(s)];
}

/**
 * A section listing the schedules, filled in when GET /schedules answers
 * (hidden when there are none).  Returns the element at once.
 */
export function schedulesSection() {
  const body = h('tbody');
  const section = h('section', { class: 'schedules', hidden: true, 'aria-labelledby': 'schedules-title' },
    h('h2', { id: 'schedules-title' }, 'Schedules'),
    h('div', { class: 'schedules-scroll' },
      h('table', { class: 'mx-table schedules-table' },
        h('thead', {}, h('tr', {},
          h('th', { scope: 'col' }, 'Spec'),
          h('th', { scope: 'col' }, 'Cron'),
          h('th', { scope: 'col' }, 'Next'),
          h('th', { scope: 'col' }, 'Gate'),
          h('th', { scope: 'col' }, 'Last verdicts (newest right)'))),
        body)));
  api('GET', 'schedules').then((r) => {
    const list = r?.schedules ?? [];
    replace(body, list.flatMap(rows));
    section.hidden = list.length === 0;
  }).catch(() => { /* the list of matrices says what went wrong */ });
  return section;
}
