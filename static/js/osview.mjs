// osview.mjs - an OS-combination matrix side by side (#/os/ID?a=&b=&metric=
// &noisy_cv=; GET /api/v1/matrices/{id}/os): per measurement (pair,
// protocol, direction, params) the cell run under OS pair A beside the one
// run under B, with both medians and spreads, the difference in percent,
// whether the interquartile ranges overlap, the two-sided Mann-Whitney U
// p-value (only with 3 or more runs a side; exact or normal approximation,
// as the API says) and a verdict; per side the sender against the receiver
// ("sent 3.11, received 1.74 Gbit/s" flagged as loss); and a box plot of
// both (boxplot.mjs) on one axis per protocol.  The choices live in the
// address, so the view is a link.  Table: CSV and JSON.

import { api } from './api.mjs';
import { MiniBox, rangeOf } from './boxplot.mjs';
import { h, replace } from './dom.mjs';
import { exportBar } from './export.mjs';
import { bitrate, count, matrixPageFailed, paramText, percent } from './format.mjs';

const METRICS = {
  receiver_bps: { label: 'receiver bitrate', unit: 'Gbit/s', scale: 1e-9, text: bitrate },
  sender_bps: { label: 'sender bitrate', unit: 'Gbit/s', scale: 1e-9, text: bitrate },
  lost_percent: { label: 'UDP loss', unit: '%', scale: 1, text: percent },
  jitter_ms: { label: 'UDP jitter', unit: 'ms', scale: 1, text: (v) => (typeof v === 'number' ? `${v.toFixed(3)} ms` : '—') },
  retransmits: { label: 'retransmits', unit: 'count', scale: 1, text: count },
};

const VERDICT = {   // [what the pill says, what its title explains]
  beyond_spread: ['differs', 'the interquartile ranges are apart and neither side is too noisy'],
  within_spread: ['within spread', 'the interquartile ranges overlap'],
  noisy: ['noisy', 'too noisy to compare: a side\'s coefficient of variation is over the threshold'],
  missing: ['one side only', 'the measurement did not run under both OS pairs'],
};

/** "+49.5 %" / "−12.0 %" / "—". */
export function signedPercent(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '—';
  return `${v > 0 ? '+' : v < 0 ? '−' : '±'}${Math.abs(v).toFixed(1)} %`;
}

/** The p-value as shown: "0.100" (three decimals; "<0.001" below). */
export function pText(p) {
  if (typeof p !== 'number') return '—';
  return p < 0.001 ? '<0.001' : p.toFixed(3);
}

function query() {
  const i = location.hash.indexOf('?');
  return new URLSearchParams(i < 0 ? '' : location.hash.slice(i + 1));
}

/** #/os/ID: the page for matrix ID. */
export function renderOsView(main, ctx, rest) {
  if (!/^[1-9][0-9]{0,15}$/.test(rest)) {
    replace(main, h('h1', {}, 'OS side by side'),
      h('p', { class: 'alert' }, `There is no matrix "${rest}": `, h('a', { href: '#/matrices' }, 'see the list of matrices'), '.'));
    return null;
  }
  const page = new OsPage(main, Number(rest), query());
  return () => page.stop();
}

class OsPage {
  #id;
  #q;                      // {a, b, metric, noisy_cv}
  #asked = 0;
  #stopped = false;
  #boxes = [];
  #view = null;
  #swept = [];             // the params that differ between rows (shown per row)
  #title = h('h1', {});
  #status = h('p', { class: 'muted', role: 'status' }, 'Loading…');
  #form = h('form', { class: 'mx-filters', 'aria-label': 'What to compare' });
  #method = h('p', { class: 'help os-method' });
  #head = h('tr');
  #body = h('tbody');
  #content;

  constructor(main, id, q) {
    this.#id = id;
    const cv = Number(q.get('noisy_cv'));
    this.#q = {
      a: q.get('a'), b: q.get('b'), metric: METRICS[q.get('metric')] ? q.get('metric') : 'receiver_bps',
      noisy_cv: q.get('noisy_cv') !== null && Number.isFinite(cv) && cv >= 0 && cv <= 10 ? cv : null,
    };
    this.#title.textContent = `OS side by side: matrix #${id}`;
    const table = h('table', { class: 'mx-table os-table' },
      h('caption', { class: 'visually-hidden' }, 'One OS pair beside another, per measurement'),
      h('thead', {}, this.#head), this.#body);
    this.#content = h('div', { hidden: true },
      h('section', { 'aria-labelledby': 'os-table-title' },
        h('div', { class: 'section-head' }, h('h2', { id: 'os-table-title' }, 'Side by side'),
          exportBar(() => `matrix-${id}-os-${this.#view?.a ?? 'a'}-vs-${this.#view?.b ?? 'b'}`.replace(/\//g, '_'), () => this.#rows())),
        this.#method,
        h('div', { class: 'table-wrap' }, table)));
    replace(main, h('article', { class: 'os-page', dataset: { matrix: String(id) } },
      h('p', { class: 'crumbs' }, h('a', { href: '#/matrices' }, 'Matrices'), ' › ',
        h('a', { href: `#/matrices/${id}` }, `matrix #${id}`)),
      this.#title,
      h('p', { class: 'help' }, 'Each row is one measurement (pair, protocol, direction, parameters) run under OS pair A '
        + 'and under OS pair B (client OS/server OS). "differs" needs the interquartile ranges (first to third quartile '
        + 'of the runs) apart and neither side too noisy (coefficient of variation over the threshold). Sender against '
        + 'receiver per side: a receiver more than 5 % below its sender is loss.'),
      this.#form, this.#status, this.#content));
    this.#load();
  }

  stop() {
    this.#stopped = true;
    for (const b of this.#boxes) b.dispose();
  }

  #remember() {
    const p = new URLSearchParams();
    for (const k of ['a', 'b']) if (this.#q[k]) p.set(k, this.#q[k]);
    if (this.#q.metric !== 'receiver_bps') p.set('metric', this.#q.metric);
    if (this.#q.noisy_cv !== null) p.set('noisy_cv', String(this.#q.noisy_cv));
    const qs = p.toString();
    history.replaceState(null, '', `#/os/${this.#id}${qs ? `?${qs}` : ''}`);
  }

  async #load() {
    const ask = ++this.#asked;
    const p = new URLSearchParams({ metric: this.#q.metric });
    for (const k of ['a', 'b']) if (this.#q[k]) p.set(k, this.#q[k]);
    if (this.#q.noisy_cv !== null) p.set('noisy_cv', String(this.#q.noisy_cv));
    try {
      const { os } = await api('GET', `matrices/${this.#id}/os?${p}`);
      if (ask !== this.#asked || this.#stopped) return;
      this.#draw(os);
    } catch (err) {
      if (ask !== this.#asked || this.#stopped || err.status === 401) return;
      matrixPageFailed(this.#status, this.#content, `Could not load the view: ${err.message}. `, this.#id);
    }
  }

  #drawForm(os) {
    const choose = (name, value) => {
      const s = h('select', { name },
        os.pairs.map((pr) => h('option', { value: pr.os, selected: pr.os === value }, `${pr.os} (${pr.cells} cells)`)));
      s.addEventListener('change', () => { this.#q[name] = s.value; this.#remember(); this.#load(); });
      return s;
    };
    const metric = h('select', { name: 'metric' },
      Object.entries(METRICS).map(([k, m]) => h('option', { value: k, selected: k === this.#q.metric }, m.label)));
    metric.addEventListener('change', () => { this.#q.metric = metric.value; this.#remember(); this.#load(); });
    const cv = h('input', { type: 'number', name: 'noisy_cv', min: '0', max: '1000', step: '0.5', inputmode: 'decimal',
      value: String(+(os.noisy_cv * 100).toFixed(2)) });
    cv.addEventListener('change', () => {
      const v = Number(cv.value);
      if (!Number.isFinite(v) || v < 0 || v > 1000) return;
      this.#q.noisy_cv = v / 100;
      this.#remember();
      this.#load();
    });
    replace(this.#form,
      h('label', {}, 'A (client OS/server OS) ', choose('a', os.a)),
      h('label', {}, 'B ', choose('b', os.b)),
      h('label', {}, 'Metric ', metric),
      h('label', {}, 'Noisy over (cv %) ', cv));
  }

  #draw(os) {
    this.#view = os;
    this.#title.textContent = `OS side by side: ${os.name}`;
    document.title = `${os.name} · OS side by side · testbedd`;
    this.#drawForm(os);
    for (const b of this.#boxes) b.dispose();
    this.#boxes = [];
    if (os.pairs.length < 2) {
      this.#content.hidden = true;
      this.#status.hidden = false;
      this.#status.className = 'muted';
      this.#status.textContent = os.pairs.length === 0
        ? 'No cell of this matrix has run under an OS pair yet.'
        : `Every cell ran under ${os.pairs[0].os}: there is no other OS pair to put beside it.`;
      return;
    }
    this.#status.hidden = true;
    this.#content.hidden = false;
    const m = METRICS[os.metric];
    replace(this.#method, `A = ${os.a}, B = ${os.b}; ${m.label}. Quartiles: ${os.method.quartiles}. `
      + `p: ${os.method.p_value}; a p-value is no verdict on its own (with 3 runs a side the smallest possible is 0.1).`);
    replace(this.#head, ['measurement', `A: ${os.a}`, `B: ${os.b}`, 'B vs A', 'IQRs', 'U test p', 'verdict',
      'A sent → recv', 'B sent → recv', `spread (${m.unit})`].map((c) => h('th', { scope: 'col' }, c)));
    const keys = new Set(os.rows.flatMap((r) => Object.keys(r.params ?? {})));
    this.#swept = [...keys].filter((k) => k !== 'protocol' && k !== 'direction'
      && new Set(os.rows.map((r) => JSON.stringify(r.params?.[k] ?? null))).size > 1);
    const ranges = {};
    for (const p of new Set(os.rows.map((r) => r.protocol))) {
      ranges[p] = rangeOf(os.rows.filter((r) => r.protocol === p).flatMap((r) => [r.a?.stats, r.b?.stats]));
    }
    replace(this.#body, os.rows.map((r) => this.#row(r, m, ranges[r.protocol])));
  }

  #row(r, m, range) {
    const side = (s, k) => {
      const st = s?.stats;
      if (!s) return h('td', { 'data-label': k.toUpperCase(), class: `num ${k}-median na` }, 'did not run');
      return h('td', { 'data-label': k.toUpperCase(), class: `num ${k}-median${st?.noisy ? ' noisy' : ''}`, dataset: { cell: String(s.cell) } },
        h('span', { class: 'median' }, m.text(st?.median)),
        h('small', { class: 'muted' }, ` n=${s.n}`,
          st && typeof st.cv === 'number' ? `, cv ${(st.cv * 100).toFixed(1)} %` : '', st?.noisy ? ' noisy' : ''),
        st && typeof st.q1 === 'number' ? h('small', { class: 'iqr muted' }, `IQR ${m.text(st.q1)} – ${m.text(st.q3)}`) : null);
    };
    const sr = (s, k) => {
      const label = `${k.toUpperCase()} sent → received`;
      if (!s) return h('td', { 'data-label': label, class: `${k}-sr na` }, '—');
      return h('td', { 'data-label': label, class: `${k}-sr${s.loss ? ' loss' : ''}`, dataset: { loss: s.loss ? '1' : '0' } },
        `${bitrate(s.sender_bps?.median)} → ${bitrate(s.receiver_bps?.median)}`,
        s.loss ? h('strong', { class: 'loss-mark' }, ` loss ${s.gap_percent.toFixed(1)} %`) : null);
    };
    const mw = r.mann_whitney;
    const params = this.#swept.filter((k) => r.params?.[k] != null).map((k) => paramText(k, r.params[k])).join(' ');
    let box = h('span', { class: 'muted' }, '—');
    if (r.a?.stats || r.b?.stats) {
      const b = new MiniBox(`${r.protocol} ${r.direction}: ${m.label} per run, A and B`);
      this.#boxes.push(b);
      box = b.draw([{ name: 'A', stats: r.a?.stats }, { name: 'B', stats: r.b?.stats }],
        { scale: m.scale, unit: m.unit, range }).el;
    }
    return h('tr', { class: `verdict-${r.verdict}`, dataset: { protocol: r.protocol, direction: r.direction, verdict: r.verdict } },
      h('td', { 'data-label': 'measurement', class: 'pair' }, h('strong', {}, `${r.protocol} ${r.direction}`), ' ',
        `${r.client} → ${r.server}`, h('span', { class: 'muted' }, ` over ${r.link}`),
        params ? h('code', { class: 'params' }, ` ${params}`) : null),
      side(r.a, 'a'), side(r.b, 'b'),
      h('td', { 'data-label': 'B vs A', class: 'num diff' }, signedPercent(r.diff_percent)),
      h('td', { 'data-label': 'IQRs', class: 'overlap' }, r.iqr_overlap === null ? '—' : r.iqr_overlap ? 'overlap' : 'apart'),
      h('td', { 'data-label': 'U test p', class: 'num pvalue', title: mw ? `two-sided Mann-Whitney U = ${mw.u}, n ${mw.n_a} and ${mw.n_b}` : 'needs 3 runs or more on each side' },
        mw ? [pText(mw.p), h('small', { class: 'muted' }, ` ${mw.method}`)] : h('span', { class: 'muted' }, 'n < 3')),
      h('td', { 'data-label': 'verdict', class: 'verdict' }, h('span', { class: `pill pill-os-${r.verdict}`, title: VERDICT[r.verdict]?.[1] }, VERDICT[r.verdict]?.[0] ?? r.verdict)),
      sr(r.a, 'a'), sr(r.b, 'b'),
      h('td', { 'data-label': 'spread', class: 'spread' }, box));
  }

  /** The table as data (the downloads). */
  #rows() {
    const os = this.#view;
    if (!os) return [];
    return os.rows.map((r) => ({
      protocol: r.protocol, direction: r.direction, client: r.client, server: r.server, link: r.link, params: r.params,
      metric: os.metric, a: os.a, b: os.b,
      a_cell: r.a?.cell ?? null, a_n: r.a?.n ?? null, a_median: r.a?.stats?.median ?? null, a_q1: r.a?.stats?.q1 ?? null,
      a_q3: r.a?.stats?.q3 ?? null, a_cv: r.a?.stats?.cv ?? null, a_values: r.a?.stats?.values?.join(' ') ?? null,
      b_cell: r.b?.cell ?? null, b_n: r.b?.n ?? null, b_median: r.b?.stats?.median ?? null, b_q1: r.b?.stats?.q1 ?? null,
      b_q3: r.b?.stats?.q3 ?? null, b_cv: r.b?.stats?.cv ?? null, b_values: r.b?.stats?.values?.join(' ') ?? null,
      diff_percent: r.diff_percent, iqr_overlap: r.iqr_overlap, u_p: r.mann_whitney?.p ?? null,
      u_method: r.mann_whitney?.method ?? null, verdict: r.verdict,
      a_sent: r.a?.sender_bps?.median ?? null, a_received: r.a?.receiver_bps?.median ?? null, a_loss: r.a?.loss ?? null,
      b_sent: r.b?.sender_bps?.median ?? null, b_received: r.b?.receiver_bps?.median ?? null, b_loss: r.b?.loss ?? null,
    }));
  }
}
