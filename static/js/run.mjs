// run.mjs - one run of a matrix in a dialog: the exact client and server
// commands (GET /api/v1/runs/{id}), the iperf3 versions, the outcome and
// links to the raw output of both sides.  matrix.mjs opens it from the
// results table and calls refresh() when the run's state changes.

import { api } from './api.mjs';
import { IntervalChart } from './charts.mjs';
import { hostLine } from './hostmeta.mjs';
import { h, replace } from './dom.mjs';
import { bitrateNode, count, pairText, percent, runTitle, statePill } from './format.mjs';
import { absolute } from './time.mjs';

export class RunDialog {
  #title = h('h2', { id: 'run-title' });
  #body = h('div', { class: 'run-body' });
  #runId = null;
  #asked = 0;
  #chart = null;
  #hosts = new Map();      // matrix id -> its /hosts list (a promise)

  constructor() {
    const close = h('button', { type: 'submit', value: 'close' }, 'Close');
    this.el = h('dialog', { class: 'run-dialog', 'aria-labelledby': 'run-title' },
      h('form', { method: 'dialog' },
        h('div', { class: 'run-dialog-head' }, this.#title, close),
        this.#body));
    this.el.addEventListener('close', () => {
      this.#runId = null;
      this.#chart?.dispose();
      this.#chart = null;
    });
    this.close = close;
  }

  /** The id of the run shown, or null when the dialog is closed. */
  get runId() { return this.#runId; }

  /** Show run brief (a row of the results table) and fetch the rest. */
  open(brief) {
    this.#runId = brief.id;
    this.#title.textContent = `Run ${brief.seq} · ${runTitle(brief)}`;
    replace(this.#body, h('p', { class: 'muted' }, 'Loading the run…'));
    if (!this.el.open) this.el.showModal();
    this.close.focus();
    this.refresh();
  }

  async refresh() {
    const id = this.#runId;
    if (id === null) return;
    const ask = ++this.#asked;
    try {
      const { run } = await api('GET', `runs/${id}`);
      const hosts = await this.#hostsOf(run.matrix);
      if (ask !== this.#asked || id !== this.#runId) return;
      this.#draw(run, hosts);
    } catch (err) {
      if (ask !== this.#asked || err.status === 401) return;
      replace(this.#body, h('p', { class: 'alert' }, `Could not load run ${id}: ${err.message}`));
    }
  }

  /** What the hosts of matrix id were (GET /matrices/{id}/hosts), fetched once; [] when unknown. */
  #hostsOf(id) {
    if (!this.#hosts.has(id)) {
      this.#hosts.set(id, api('GET', `matrices/${id}/hosts`).then((x) => x.hosts, () => {
        this.#hosts.delete(id);
        return [];
      }));
    }
    return this.#hosts.get(id);
  }

  #draw(r, hosts) {
    this.el.dataset.run = String(r.id);
    this.el.dataset.state = r.state;
    const facts = [];
    const add = (term, ...value) => facts.push(h('dt', {}, term), h('dd', {}, ...value));
    add('state', statePill(r.state), r.attempts > 1 ? ` after ${r.attempts} attempts` : null);
    if (r.error_class || r.error_message) {
      add('error', h('code', { class: 'code' }, r.error_class ?? 'error'), ' ', r.error_message ?? '');
    }
    add('pair', pairText(r), r.link ? h('span', { class: 'muted' }, ` over ${r.link} (${r.server_address})`) : null);
    add('iperf3', `client ${r.client_version ?? '?'}, server ${r.server_version ?? '?'}`);
    add('bitrate', 'sender ', bitrateNode(r.sender_bps), ', receiver ', bitrateNode(r.receiver_bps));
    if (r.protocol === 'udp') add('UDP loss', percent(r.lost_percent));
    else add('retransmits', count(r.retransmits));
    if (r.started_at) add('ran', absolute(r.started_at), r.finished_at ? ` to ${absolute(r.finished_at)}` : ' (running)');
    if (r.client_exit !== null || r.server_exit !== null) {
      add('exit codes', `client ${r.client_exit ?? '—'}, server ${r.server_exit ?? '—'}`);
    }
    if (r.intervals) add('intervals', `client ${r.intervals.client?.length ?? 0}, server ${r.intervals.server?.length ?? 0}`);
    if (r.cookie) add('cookie', h('code', { class: 'fp' }, r.cookie));
    const mine = [[r.client, r.client_os], [r.server, r.server_os]]
      .map(([host, os]) => hosts.find((x) => x.host === host && x.os === os)).filter(Boolean);
    if (mine.length) add('hosts', ...mine.map((x) => h('div', { class: 'host-line' }, hostLine(x))));

    this.#chart?.dispose();
    this.#chart = null;
    let charts = null;
    if ((r.intervals?.client?.length ?? 0) + (r.intervals?.server?.length ?? 0) > 0) {
      this.#chart = new IntervalChart(r.protocol, `Run ${r.seq}`);
      this.#chart.addAll(r.intervals);
      charts = h('div', { class: 'run-charts' }, h('h3', {}, 'Intervals'), this.#chart.el);
    }

    const command = (side, text) => (text
      ? h('pre', { class: 'cmd' }, h('code', { class: `${side}-command` }, text))
      : h('p', { class: 'muted' }, 'Not run yet.'));
    const raw = (side, stream) => h('a', {
      href: `api/v1/runs/${r.id}/raw?side=${side}&stream=${stream}`, target: '_blank', rel: 'noopener',
      class: 'raw-link', dataset: { side, stream },
    }, `${side} ${stream}`);
    replace(this.#body,
      h('dl', { class: 'facts run-facts' }, facts),
      charts,
      h('h3', {}, `Client command (on ${r.client})`),
      command('client', r.client_command),
      h('h3', {}, `Server command (on ${r.server})`),
      command('server', r.server_command),
      h('h3', {}, 'Raw output'),
      h('p', { class: 'raw-links' },
        raw('client', 'stdout'), ' · ', raw('client', 'stderr'), ' · ',
        raw('server', 'stdout'), ' · ', raw('server', 'stderr')));
  }
}
