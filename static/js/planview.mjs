// planview.mjs - the plan on "New matrix": POST /api/v1/matrices/plan and
// what it answers: the summary (runs, cells, order, rounds, estimate), the
// boots it needs, the rounds as a timeline and the runs in the order they
// run, a page at a time ("Show the next 500 runs"); what it changes on the
// hosts (tunable sets) and routers (link profiles, with their exact
// commands) and how it puts them back.  A plan whose spec has changed since
// is marked stale.

import { api } from './api.mjs';
import { announce, h, replace } from './dom.mjs';
import { exportBar, rowsOfTable } from './export.mjs';
import { errorText, pairText, tunableText } from './format.mjs';
import { duration } from './time.mjs';

const PLAN_ROWS = 500;        // a plan may have 100000 runs: the API answers a page of them, the table shows this many at a time
const TIMELINE_ROUNDS = 60;   // the timeline shows the first rounds

export class PlanView {
  el = h('section', { class: 'plan-out', 'aria-label': 'Plan', hidden: true });

  /** The spec changed: the plan shown (if any) is no longer its plan. */
  markStale() {
    if (!this.el.hidden) this.el.dataset.stale = 'yes';
  }

  /** Plan spec and show it, unless current() has become false meanwhile. */
  async plan(spec, current) {
    const reply = await api('POST', `matrices/plan?limit=${PLAN_ROWS}`, spec);
    if (!current()) return;
    // the next pages post the plan's own spec (its seed set): pages of the same plan
    const next = async (offset) => {
      const page = await api('POST', `matrices/plan?offset=${offset}&limit=${PLAN_ROWS}`, reply.plan.spec);
      return current() ? page.plan : null;
    };
    this.draw(reply.plan, next);
    announce(`Planned: ${reply.plan.runs} runs, about ${duration(reply.plan.estimated_s * 1000)}`);
  }

  /**
   * Show plan: its summary, boots, timeline and runs.  The API sends a page
   * of the runs (plan.page); when there are more, "Show more" asks
   * next(offset) for the next page and adds its rows.
   */
  draw(plan, next) {
    delete this.el.dataset.stale;
    replace(this.el,
      h('h2', {}, 'Plan'),
      planSummary(plan),
      h('p', { class: 'help plan-stale' }, 'The spec changed since this plan: plan again to see its runs.'),
      plan.boots?.length ? drawBoots(plan) : null,
      plan.tunables ? drawTunables(plan) : null,
      plan.link_profiles ? drawLinkProfiles(plan) : null,
      plan.rounds < plan.runs ? drawTimeline(plan) : null,
      runsTable(plan, next));
    this.el.hidden = false;
  }
}

function planSummary(plan) {
  return h('p', { class: 'plan-summary' },
    h('strong', {}, `${plan.runs} run${plan.runs === 1 ? '' : 's'}`),
    ` in ${plan.cells} cell${plan.cells === 1 ? '' : 's'} · order ${plan.order}`,
    plan.order === 'shuffled' ? ` (seed ${plan.seed})` : '',
    plan.combinations ? ` · ${plan.combinations} OS combination${plan.combinations === 1 ? '' : 's'}` : '',
    plan.rounds < plan.runs ? ` · ${plan.rounds} round${plan.rounds === 1 ? '' : 's'} (runs on disjoint hosts go at once)` : '',
    ' · estimated ', h('strong', { class: 'plan-estimate' }, duration(plan.estimated_s * 1000)),
    h('span', { class: 'muted' }, ` (${plan.estimated_s} s)`));
}

/** The boots the plan needs, in order, each with its path (how the host is switched) and estimate. */
function drawBoots(plan) {
  const total = plan.boots.reduce((a, b) => a + b.estimated_s, 0);
  return h('section', { class: 'plan-boots', 'aria-labelledby': 'plan-boots-title' },
    h('h3', { id: 'plan-boots-title' }, `${plan.boots.length} boot${plan.boots.length === 1 ? '' : 's'}`,
      h('span', { class: 'muted' }, ` · about ${duration(total * 1000)} in all`)),
    h('ol', { class: 'boot-list' }, plan.boots.map((b) => h('li', { dataset: { machine: b.machine, seq: String(b.seq ?? '') } },
      h('span', { class: 'boot-when' }, b.seq === null ? 'after the last run' : `before run ${b.seq}`), ': ',
      h('strong', {}, b.machine), ` ${b.from ?? 'off'} → `, h('strong', {}, b.to),
      b.path ? h('span', { class: 'boot-path', title: 'the boot path: how the host will be switched' }, ` by ${b.path}`) : '',
      h('span', { class: 'muted' }, ` (about ${duration(b.estimated_s * 1000)})`)))));
}

/**
 * The runs of a set ("runs 0–3": a set's runs go together) or of a profile
 * ("first run 0, last run 6": a profile's alternate with the others inside a set).
 */
function runsOf(x, together = true) {
  if (x.first_seq < 0) return 'no runs';
  if (x.first_seq === x.last_seq) return `run ${x.first_seq}`;
  return together ? `runs ${x.first_seq}–${x.last_seq}` : `first run ${x.first_seq}, last run ${x.last_seq}`;
}

/** The tunable sets: each set's values per OS, the runs it is in force for, how it is changed and restored. */
function drawTunables(plan) {
  const t = plan.tunables;
  return h('section', { class: 'plan-tunables', 'aria-labelledby': 'plan-tunables-title' },
    h('h3', { id: 'plan-tunables-title' }, `${t.sets.length} tunable set${t.sets.length === 1 ? '' : 's'}`,
      h('span', { class: 'muted' }, ` on ${t.hosts.join(', ')}`)),
    h('p', { class: 'help' }, t.change),
    h('ol', { class: 'plan-sets', start: 0 }, t.sets.map((s) => h('li', { dataset: { set: String(s.set) } },
      h('span', { class: 'plan-when' }, runsOf(s)), ': ',
      ...s.values.flatMap((v, i) => [i ? '; ' : '', h('code', { class: 'code' }, tunableText(v))])))),
    h('p', { class: 'help' }, t.restore));
}

/** The link profiles: the routers, each profile's exact commands and runs, how they are removed. */
function drawLinkProfiles(plan) {
  const l = plan.link_profiles;
  const name = (p) => (p === null ? 'unshaped' : p.name);
  return h('section', { class: 'plan-linkprof', 'aria-labelledby': 'plan-linkprof-title' },
    h('h3', { id: 'plan-linkprof-title' }, `${l.profiles.length} link profile${l.profiles.length === 1 ? '' : 's'}`,
      h('span', { class: 'muted' }, ` on ${l.routers.join(', ')}`)),
    h('p', { class: 'help' }, l.apply),
    h('ol', { class: 'plan-profiles', start: 0 }, l.profiles.map((p) => h('li', { dataset: { profile: String(p.index) } },
      h('strong', {}, name(p.profile)), h('span', { class: 'plan-when' }, ` (${runsOf(p, false)})`),
      h('pre', { class: 'cmd' }, h('code', {}, p.commands.join('\n')))))),
    h('p', { class: 'help' }, l.remove));
}

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

/** The runs table, the note of how many it shows and "Show more" (which asks next(offset) for a page). */
function runsTable(plan, next) {
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
  const table = h('table', { class: 'mx-table plan-table' },
    h('caption', { class: 'visually-hidden' }, 'The runs in the order they run'),
    h('thead', {}, h('tr', {}, ['seq', 'round', 'client → server', 'protocol', 'direction', 'iperf args']
      .map((c) => h('th', { scope: 'col' }, c)))),
    tbody);
  // the runs shown (the first page, more after "Show more"), as every table: CSV and JSON
  return [exportBar(() => 'planned-runs', () => rowsOfTable(table)), h('div', { class: 'table-wrap' }, table), note, moreButton];
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
    // a tool other than iperf3 (the spec's "tool") is named before its options
    h('td', { 'data-label': 'iperf args' }, h('code', {}, r.tool && r.tool !== 'iperf3'
      ? `${r.tool}: ${r.iperf_args ?? ''}` : r.iperf_args ?? '')));
}
