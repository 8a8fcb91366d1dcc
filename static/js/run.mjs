// run.mjs - one run's page (#/runs/ID), a permalink: the exact client and
// server commands (GET /api/v1/runs/{id}), the iperf3 versions, what the
// hosts were (GET /matrices/{id}/hosts), the outcome, the interval charts
// and the raw output of both sides (GET /runs/{id}/raw, shown on request).
// Links lead back to the run's cell on its matrix page and to the cell's
// history.
//
// While the run has not ended the page follows its matrix's run.state and
// run.interval events (GET /api/v1/events?matrix=ID) and fetches the run
// again when its state changes; IntervalChart keeps an interval once
// whichever way it came.
//
// A run whose spec asked for "sample" also gets a CPU and memory chart per
// host (RunSamplesChart) beside the bitrate: first what GET
// /runs/{id}/samples holds, then the run.sample events of the live tail
// (kept once per host and second whichever way they came).  A run that
// sampled nothing shows no such chart.
//
// The samples count from the run's start, or, with latency, from the loaded
// stream's (its first load bin's at_ms - t): the idle probe runs before
// iperf3, so that is when iperf3's intervals begin.
//
// A run whose spec asked for "latency" gets an RTT chart (RunLatencyChart):
// the run.rtt events of the live tail, GET /runs/{id}/latency when the page
// opens and again once the run has ended (with the idle vs loaded summary).

import { api } from './api.mjs';
import { IntervalChart } from './charts.mjs';
import { RunSamplesChart } from './runsamples.mjs';
import { RunLatencyChart } from './runlatency.mjs';
import { RunFlame } from './runflame.mjs';
import { hostLine } from './hostmeta.mjs';
import { h, replace } from './dom.mjs';
import { bitrateNode, count, pairText, percent, RUN_ENDED, runTitle, statePill, tunableText } from './format.mjs';
import { LiveStream } from './live.mjs';
import { absolute } from './time.mjs';

/** Show run rest (its id) in main; returns the function that stops the page. */
export function renderRun(main, ctx, rest) {
  if (!/^[1-9][0-9]{0,15}$/.test(rest)) {
    replace(main, h('h1', {}, 'Run'),
      h('p', { class: 'alert' }, `There is no run "${rest}": `, h('a', { href: '#/matrices' }, 'see the matrices'), '.'));
    return null;
  }
  const page = new RunPage(main, Number(rest));
  return () => page.stop();
}

class RunPage {
  #main;
  #id;
  #title = h('h1', { id: 'run-title' }, 'Run');
  #crumbs = h('p', { class: 'crumbs' });
  #body = h('div', { class: 'run-body' }, h('p', { class: 'muted', role: 'status' }, 'Loading the run…'));
  #asked = 0;
  #stopped = false;
  #chart = null;
  #live = null;
  #hosts = null;           // the matrix's /hosts list (a promise)
  #samples = null;         // RunSamplesChart, made with the first sample
  #samplesAsked = false;   // GET /runs/{id}/samples asked once (again after a reset)
  #samplesBox = h('div', { class: 'run-samples-box', hidden: true },
    h('h3', { id: 'run-samples-title' }, 'CPU and memory'));
  #started = null;         // when the run started (ms; t = 0 of the samples)
  #loadStart = null;       // when the loaded latency stream (and iperf3) started (ms; t = 0 of the samples then)
  #latency = null;         // RunLatencyChart, made with the first RTT bin
  #latencyAsked = null;    // GET /runs/{id}/latency: null never, false while it ran, true after its end
  #latencyBox = h('div', { class: 'run-latency-box', hidden: true },
    h('h3', { id: 'run-latency-title' }, 'Latency under load'));
  #flame = new RunFlame();  // the flame graphs, once the run ended (its spec's "profile")

  constructor(main, id) {
    this.#main = main;
    this.#id = id;
    replace(main, h('article', { class: 'run-page', 'aria-labelledby': 'run-title', dataset: { run: String(id) } },
      this.#crumbs, this.#title, this.#body));
    this.refresh();
  }

  stop() {
    this.#stopped = true;
    this.#live?.stop();
    this.#chart?.dispose();
    this.#samples?.dispose();
    this.#latency?.dispose();
  }

  async refresh() {
    const ask = ++this.#asked;
    try {
      const { run } = await api('GET', `runs/${this.#id}`);
      this.#hosts ??= api('GET', `matrices/${run.matrix}/hosts`).then((x) => x.hosts, () => []);
      const hosts = await this.#hosts;
      if (ask !== this.#asked || this.#stopped) return;
      this.#draw(run, hosts);
      if (!RUN_ENDED.has(run.state)) this.#follow(run);
      else this.#live?.stop();
      if (!this.#samplesAsked && run.started_at) this.#history(run);
      if (run.started_at && this.#latencyAsked !== true && this.#latencyAsked !== RUN_ENDED.has(run.state)) this.#latencyHistory(run);
      if (RUN_ENDED.has(run.state) && run.started_at) this.#flame.load(this.#id);
    } catch (err) {
      if (ask !== this.#asked || this.#stopped || err.status === 401) return;
      document.title = 'Run · testbedd';
      replace(this.#body, h('p', { class: 'alert' }, err.status === 404 ? `There is no run ${this.#id}: ` : `Could not load run ${this.#id}: ${err.message}. `,
        h('a', { href: '#/matrices' }, 'see the matrices'), '.'));
    }
  }

  /** The stored samples of the run (none: no chart). */
  async #history(run) {
    this.#samplesAsked = true;
    try {
      const { hosts } = await api('GET', `runs/${this.#id}/samples`);
      if (this.#stopped) return;
      for (const [host, x] of Object.entries(hosts ?? {})) {
        for (const s of x.samples ?? []) this.#sample(run, host, x.side, Date.parse(s.at), s, s.n);
      }
    } catch (err) {
      if (!this.#stopped && err.status !== 401) console.warn('testbedd: the run\'s samples:', err.message);
    }
  }

  /** The stored RTT bins of the run and, once it ended, its summary (none: no chart). */
  async #latencyHistory(run) {
    const ended = RUN_ENDED.has(run.state);
    this.#latencyAsked = ended;
    try {
      const x = await api('GET', `runs/${this.#id}/latency`);
      if (this.#stopped) return;
      for (const phase of ['idle', 'load']) {
        for (const b of x.bins?.[phase] ?? []) this.#rtt(phase, b, x.tool);
      }
      if (ended && this.#latency) this.#latency.summary(x.summary, x.tool);
    } catch (err) {
      if (!this.#stopped && err.status !== 401) console.warn('testbedd: the run\'s latency:', err.message);
    }
  }

  /** One RTT bin: the chart is made (and shown) with the first. */
  #rtt(phase, bin, tool) {
    if (this.#stopped || !bin) return;
    // the idle probe ran before iperf3: the samples count from the loaded stream's start, as the intervals do
    if (phase === 'load' && Number.isFinite(bin.at_ms) && Number.isFinite(bin.t)) {
      const t0 = bin.at_ms - bin.t * 1000;
      if (this.#loadStart === null || t0 < this.#loadStart) this.#loadStart = t0;
      this.#samples?.setStart(this.#loadStart);
    }
    if (!this.#latency) {
      this.#latency = new RunLatencyChart(`Run ${this.#id}`, `run-${this.#id}-latency`);
      this.#latencyBox.append(this.#latency.el);
      this.#latencyBox.hidden = false;
    }
    this.#latency.add(phase, bin, tool);
  }

  /** One sample of host: the chart is made (and shown) with the first. */
  #sample(run, host, side, atMs, sample, n) {
    if (this.#stopped || !sample?.cpu?.length) return;
    if (!this.#samples) {
      const start = this.#loadStart ?? (run?.started_at ? Date.parse(run.started_at) : null) ?? this.#started ?? atMs;
      this.#samples = new RunSamplesChart(start, `Run ${this.#id}`, `run-${this.#id}-samples`);
      this.#samplesBox.append(this.#samples.el);
      this.#samplesBox.hidden = false;
    }
    this.#samples.add(host, side, atMs, sample, n);
  }

  /** The run's events while it has not ended. */
  #follow(run) {
    if (this.#live) return;
    this.#live = new LiveStream(['run.state', 'run.interval', 'run.sample', 'run.rtt'], { matrix: run.matrix });
    this.#live.addEventListener('run.rtt', (e) => {
      const d = e.detail.data;
      if (d.run === this.#id) this.#rtt(d.phase, d.bin && { ...d.bin, at_ms: d.bin.at_ms ?? d.at_ms }, d.tool);
    });
    this.#live.addEventListener('run.sample', (e) => {
      const d = e.detail.data;
      if (d.run === this.#id) this.#sample(null, d.host, d.side, Date.parse(e.detail.at), d.sample, d.n);
    });
    this.#live.addEventListener('run.state', (e) => { if (e.detail.data.run === this.#id) this.refresh(); });
    this.#live.addEventListener('run.interval', (e) => {
      const d = e.detail.data;
      if (d.run === this.#id) this.#chart?.add(d.side, d.n, d.interval);
    });
    this.#live.addEventListener('reset', () => { this.#samplesAsked = false; this.#latencyAsked = null; this.refresh(); });
    this.#live.start();
  }

  #draw(r, hosts) {
    const el = this.#main.querySelector('.run-page');
    el.dataset.state = r.state;
    if (r.started_at) this.#started = Date.parse(r.started_at);
    const title = `Run ${r.seq} · ${runTitle(r)}`;
    this.#title.textContent = title;
    document.title = `${title} · testbedd`;
    replace(this.#crumbs,
      h('a', { href: `#/matrices/${r.matrix}`, class: 'crumb-matrix' }, `Matrix #${r.matrix}`), ' › ',
      h('a', { href: `#/matrices/${r.matrix}?cell=${r.cell}`, class: 'crumb-cell' }, `cell ${r.cell}`), ' › ',
      `repeat ${r.repeat + 1}`, ' · ',
      h('a', { href: `#/matrices/${r.matrix}/cells/${r.cell}/history`, class: 'crumb-history' }, 'history of this cell'));

    const facts = [];
    const add = (term, ...value) => facts.push(h('dt', {}, term), h('dd', {}, ...value));
    add('state', statePill(r.state), r.attempts > 1 ? ` after ${r.attempts} attempts` : null);
    if (r.error_class || r.error_message) {
      add('error', h('code', { class: 'code' }, r.error_class ?? 'error'), ' ', r.error_message ?? '');
    }
    add('pair', pairText(r), r.link ? h('span', { class: 'muted' }, ` over ${r.link} (${r.server_address})`) : null);
    // the traffic tool that ran (iperf2's binary is "iperf"), with both ends' versions
    const tool = r.tool ?? 'iperf3';
    add(tool, `client ${r.client_version ?? '?'}, server ${r.server_version ?? '?'}`);
    add('bitrate', 'sender ', bitrateNode(r.sender_bps), ', receiver ', bitrateNode(r.receiver_bps));
    // netperf's request/response test: transactions and their latency (µs), as netperf measured them
    const rr = r.summary?.client?.rr;
    if (rr) {
      const us = (x) => (x === null || x === undefined ? '—' : `${Number(x).toFixed(0)} µs`);
      add('transactions', h('span', { class: 'rr' },
        `${rr.transactions_per_s === null ? '—' : Number(rr.transactions_per_s).toFixed(1)} /s; latency mean ${us(rr.mean_latency_us)}, `
        + `p50 ${us(rr.p50_latency_us)}, p90 ${us(rr.p90_latency_us)}, p99 ${us(rr.p99_latency_us)}`));
    }
    if (r.protocol === 'udp') add('UDP loss', percent(r.lost_percent));
    else add('retransmits', count(r.retransmits));
    // the idle check before the run waited (the spec's idle): for how long and for what
    const idle = r.summary?.idle;
    if (idle) add('waited', h('span', { class: 'idle-waited' }, `${idle.waited_s.toFixed(1)} s for idle hosts: ${idle.busy}`));
    if (r.started_at) add('ran', absolute(r.started_at), r.finished_at ? ` to ${absolute(r.finished_at)}` : ' (running)');
    if (r.client_exit !== null || r.server_exit !== null) {
      add('exit codes', `client ${r.client_exit ?? '—'}, server ${r.server_exit ?? '—'}`);
    }
    if (r.intervals) add('intervals', `client ${r.intervals.client?.length ?? 0}, server ${r.intervals.server?.length ?? 0}`);
    if (r.cookie) add('cookie', h('code', { class: 'fp' }, r.cookie));
    // the tunable set in force on both ends (set, read back and restored by testbedd)
    const tun = r.params?.tunables;
    if (tun) {
      add('tunables', h('span', { class: 'tunables' }, `set ${tun.set}: `,
        ...tun.values.flatMap((t, i) => [i > 0 ? '; ' : '', h('code', { class: 'code' }, tunableText(t))])));
    }
    // the link profile in force on the routers (applied, read back and removed by testbedd)
    const lp = r.params?.link_profile;
    if (lp) {
      const what = lp.name === null ? 'no pipe'
        : [lp.rate_bps > 0 ? `${lp.rate_bps / 1e6} Mbit/s` : 'unlimited', `${lp.loss_percent} % loss`,
          lp.delay_ms > 0 ? `${lp.delay_ms} ms delay` : null,
          lp.queue !== null ? `queue ${lp.queue}` : null].filter(Boolean).join(', ');
      add('link profile', h('span', { class: 'link-profile' }, `${lp.name ?? 'unshaped'}: `,
        h('code', { class: 'code' }, what), ` on ${lp.routers.join(', ')}`));
    }
    const mine = [[r.client, r.client_os], [r.server, r.server_os]]
      .map(([host, os]) => hosts.find((x) => x.host === host && x.os === os)).filter(Boolean);
    if (mine.length) add('hosts', ...mine.map((x) => h('div', { class: 'host-line' }, hostLine(x))));

    // the chart stays across refreshes (the live tail adds to it)
    if (!this.#chart) this.#chart = new IntervalChart(r.protocol, title, `run-${r.id}-intervals`);
    this.#chart.addAll(r.intervals);
    const charts = h('section', { class: 'run-charts', 'aria-labelledby': 'run-charts-title' },
      h('h2', { id: 'run-charts-title' }, 'Intervals'),
      h('div', { class: 'run-charts-grid' },
        this.#chart.points > 0 || !RUN_ENDED.has(r.state) ? this.#chart.el : h('p', { class: 'muted' }, 'No intervals stored.'),
        this.#samplesBox, this.#latencyBox));

    const command = (side, text) => (text
      ? h('pre', { class: 'cmd' }, h('code', { class: `${side}-command` }, text))
      : h('p', { class: 'muted' }, 'Not run yet.'));
    replace(this.#body,
      h('dl', { class: 'facts run-facts' }, facts),
      h('h2', {}, `Client command (on ${r.client})`),
      command('client', r.client_command),
      h('h2', {}, `Server command (on ${r.server})`),
      command('server', r.server_command),
      charts,
      this.#flame.el,
      h('section', { class: 'run-raw', 'aria-labelledby': 'run-raw-title' },
        h('h2', { id: 'run-raw-title' }, 'Raw output'),
        h('p', { class: 'help' }, `What ${r.tool ?? 'iperf3'} printed, unchanged. Open one to read it here, or follow its link.`),
        ['client', 'server'].flatMap((side) => ['stdout', 'stderr'].map((stream) => rawOutput(r, side, stream)))));
  }
}

/** A <details> with one raw output, fetched the first time it opens. */
function rawOutput(r, side, stream) {
  const href = `api/v1/runs/${r.id}/raw?side=${side}&stream=${stream}`;
  const pre = h('pre', { class: 'raw-text' }, h('span', { class: 'muted' }, 'Loading…'));
  const details = h('details', { class: 'raw-output', dataset: { side, stream } },
    h('summary', {}, `${side} ${stream} `,
      h('a', { href, target: '_blank', rel: 'noopener', class: 'raw-link', dataset: { side, stream } }, 'open')),
    pre);
  let loaded = false;
  details.addEventListener('toggle', async () => {
    if (!details.open || loaded) return;
    loaded = true;
    try {
      const res = await fetch(href, { credentials: 'same-origin', cache: 'no-store' });
      const text = await res.text();
      if (res.ok) replace(pre, text === '' ? h('span', { class: 'muted' }, '(empty)') : text);
      else {
        let msg = text;
        try { msg = JSON.parse(text).error.message; } catch { /* not JSON */ }
        replace(pre, h('span', { class: 'muted' }, msg));
      }
      details.dataset.loaded = res.ok ? 'ok' : String(res.status);
    } catch (err) {
      loaded = false;
      replace(pre, h('span', { class: 'alert' }, `Could not load it: ${err.message}`));
    }
  });
  return details;
}
