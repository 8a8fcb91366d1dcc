// nowrunning.mjs - the "Now running" section of a matrix page while it has
// not ended: the current run (seq, round, state, its commands), its latest
// bitrate of each side from run.interval events, or the boot in progress
// (matrix.boot events), a run waiting for idle hosts (run.waiting events: what
// is busy), and the live charts (livecharts.mjs).  The iperf3
// versions of a run are fetched once, to say when a client (iperf3 before
// 3.17) reports its intervals only at its end.

import { api } from './api.mjs';
import { h, replace } from './dom.mjs';
import { bitrate, MATRIX_ENDED, pairText, RUN_ENDED, statePill } from './format.mjs';
import { LiveCharts } from './livecharts.mjs';

export class NowRunning {
  #runs;                   // the RunsTable
  #matrix;                 // () -> the matrix shown (or null)
  #onOpen;
  #current = null;         // the id of the run shown as the current one
  #rates = new Map();      // run id -> {client, server}: the latest interval of each side
  #versions = new Map();   // run id -> {client_version, server_version} (or null: a pending fetch)
  #booting = null;         // the boot in progress {host, os, action}
  #waiting = new Map();    // run id -> {busy, wait_s, since}: a pending run waiting for idle hosts
  #charts;
  #title = h('h2', { id: 'mx-current-title' }, 'Now running');
  #run = h('p', { class: 'mx-current-run' });
  #what = h('span', { class: 'live-what' });
  #bps = h('span', { class: 'live-bps' });
  #at = h('span', { class: 'live-at muted' });
  #note = h('p', { class: 'help live-note', hidden: true });

  /**
   * runs: the page's RunsTable; matrix(): the matrix shown; onOpen(r) opens
   * run r; plots: false leaves the live plots out (the status page).
   */
  constructor(runs, matrix, onOpen, { plots = true } = {}) {
    this.#charts = new LiveCharts(plots);
    this.#runs = runs;
    this.#matrix = matrix;
    this.#onOpen = onOpen;
    this.el = h('section', { class: 'mx-current', 'aria-labelledby': 'mx-current-title', hidden: true },
      this.#title, this.#run, h('p', { class: 'live-rate' }, this.#what, ' ', this.#bps, ' ', this.#at), this.#note,
      this.#charts.el);
  }

  /** Forget every run (the page loads them again): run ids outlive a resume, an earlier attempt's intervals are not this one's. */
  clear() {
    this.#rates.clear();
    this.#charts.clear();
    this.#current = null;
  }

  /** The page is left. */
  stop() {
    this.#charts.stop();
  }

  /** The page's LiveStream's source: the live plots' worker reads the stream (livecharts.mjs). */
  eventSource(url, names) {
    return this.#charts.eventSource(url, names);
  }

  /** The runs table was loaded: chart the running runs, show the one of seq (the matrix's current_seq). */
  loaded(seq) {
    for (const r of this.#runs.all()) if (r.state === 'running') this.#charts.show(r);
    this.pick(seq);
  }

  /** Show the run of seq, else keep the shown one, else a running one. */
  pick(seq) {
    if (seq !== null && seq !== undefined && this.#runs.idOfSeq(seq) !== undefined) this.#current = this.#runs.idOfSeq(seq);
    else if (this.#current === null) this.#current = this.#runs.all().find((r) => r.state === 'running')?.id ?? null;
  }

  /** A run.state event d was applied to the runs table. */
  runState(d) {
    const r = this.#runs.get(d.run);
    if (d.state !== 'pending') this.#waiting.delete(d.run);
    if (d.state === 'running') {
      this.#current = d.run;
      this.#charts.show(r);
    } else if (RUN_ENDED.has(d.state)) {
      this.#charts.ended(r);
    }
    this.draw();
  }

  /** A run.waiting event d: run d.run waits for idle hosts (d.busy says what is busy). */
  waiting(d) {
    this.#waiting.set(d.run, { busy: d.busy, wait_s: d.wait_s, since: Date.now() });
    this.#current = d.run;
    this.draw();
  }

  /** A matrix.boot event d. */
  boot(d) {
    this.#booting = d.state === 'running' ? { host: d.host, os: d.os, action: d.action } : null;
    this.draw();
  }

  /** A run.interval event d. */
  interval(d) {
    const iv = d.interval ?? {};
    const rate = this.#rates.get(d.run) ?? {};
    rate[d.side] = { bps: iv.sum?.bits_per_second, n: d.n, start: iv.start, end: iv.end, omitted: iv.omitted };
    this.#rates.set(d.run, rate);
    const state = this.#runs.get(d.run)?.state;
    if (state !== 'running' && !RUN_ENDED.has(state)) this.#runs.update(d.run, { state: 'running' }, ['state']);
    this.#current = d.run;
    if (this.#runs.has(d.run)) this.#charts.interval(this.#runs.get(d.run), d.side, d.n, iv);
    this.draw();
  }

  draw() {
    const m = this.#matrix();
    const running = m && !MATRIX_ENDED.has(m.state);
    this.el.hidden = !running;
    if (!running) return;
    const r = this.#current !== null ? this.#runs.get(this.#current) : null;
    if (this.#booting) {
      const b = this.#booting;
      this.#say('Booting', `${b.host} into ${b.os}` + (b.action ? ` (boot action #${b.action})` : '') + ' for the next runs…');
    } else if (!r) {
      delete this.el.dataset.run;
      this.#say('Now running', m.state === 'queued' ? 'Nothing yet: the matrix is queued.' : 'Starting the next run…');
    } else {
      this.#drawRun(m, r);
    }
  }

  /** A title and a line, no run. */
  #say(title, text) {
    this.#title.textContent = title;
    this.#run.textContent = text;
    this.#what.textContent = '';
    this.#bps.textContent = '';
    this.#at.textContent = '';
  }

  #drawRun(m, r) {
    const p = m.progress ?? {};
    this.el.dataset.run = String(r.id);
    this.el.dataset.seq = String(r.seq);
    const wait = r.state === 'pending' ? this.#waiting.get(r.id) : undefined;
    this.#title.textContent = r.state === 'running' ? 'Now running' : wait ? 'Waiting for idle hosts'
      : r.state === 'pending' ? 'Starting' : 'Last run';
    const commands = h('button', { type: 'button', class: 'link-quiet' }, 'Commands');
    commands.addEventListener('click', () => this.#onOpen(r));
    // the round (runs of a round go at once): "round 3 of 6, 2 runs at once"
    const all = this.#runs.all();
    const rounds = all.length ? Math.max(...all.map((x) => x.round ?? x.seq)) + 1 : 0;
    const together = all.filter((x) => (x.round ?? x.seq) === (r.round ?? r.seq)).length;
    replace(this.#run, `seq ${r.seq} (${r.seq + 1} of ${p.total ?? this.#runs.size}) `,
      h('span', { class: 'mx-round' }, `· round ${(r.round ?? r.seq) + 1} of ${rounds}${together > 1 ? `, ${together} runs at once` : ''} `),
      statePill(r.state), ' ', commands);
    this.#what.textContent = `${pairText(r)} ${r.protocol} ${r.direction}:`;
    this.#drawRate(r, this.#askVersions(r));
    if (wait) {
      this.#bps.textContent = 'not started: an end is busy';
      this.#note.hidden = false;
      this.#note.dataset.waiting = 'yes';
      this.#note.textContent = `Waiting since ${new Date(wait.since).toLocaleTimeString()}: ${wait.busy}. ` +
        `The run starts once both ends are idle, or fails as busy_host after ${wait.wait_s} s (the spec's idle.wait_s).`;
    } else {
      delete this.#note.dataset.waiting;
    }
  }

  /** Run r's latest bitrate of each side; v: its iperf3 versions (null until known). */
  #drawRate(r, v) {
    // iperf3 before 3.17 has no --json-stream: testbedd runs its client with -J,
    // which prints every interval only when the client ends.
    const clientAtEnd = !streams(v?.client_version);
    this.#note.hidden = !(clientAtEnd && v?.client_version && r.state === 'running');
    this.#note.textContent = `${r.client}'s iperf3 ${v?.client_version} reports its intervals only when it ends ` +
      '(live client intervals need iperf3 3.17 or later); the server\'s are live.';
    const rate = this.#rates.get(r.id);
    if (!rate) {
      this.#bps.textContent = r.state === 'running' ? 'waiting for the first interval…'
        : r.state === 'pending' ? 'starting the iperf3 server…' : '';
      this.#at.textContent = '';
      return;
    }
    const side = (name) => [`${name} `, h('strong', {}, rate[name] ? bitrate(rate[name].bps)
      : name === 'client' && clientAtEnd && v?.client_version ? 'at the end' : '…')];
    replace(this.#bps, side('client'), ' · ', side('server'));
    const last = [rate.client, rate.server].filter(Boolean).sort((a, b) => (b.end ?? 0) - (a.end ?? 0))[0];
    this.#at.textContent = last ? `(${fmtS(last.start)}–${fmtS(last.end)} s${last.omitted ? ', omitted' : ''})` : '';
  }

  /** The iperf3 versions of run r (and its OS personas), fetched once (null until they are known). */
  #askVersions(r) {
    const known = this.#versions.get(r.id);
    if (known !== undefined) return known;
    this.#versions.set(r.id, null);
    api('GET', `runs/${r.id}`).then(({ run }) => {
      if (!run.client_version) { this.#versions.delete(r.id); return; }   // not started yet: ask again later
      this.#versions.set(r.id, { client_version: run.client_version, server_version: run.server_version });
      this.#runs.update(r.id, run, ['client_os', 'server_os']);   // run.state events do not say
      if (this.#current === r.id) this.draw();
    }, () => this.#versions.delete(r.id));
    return null;
  }
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
