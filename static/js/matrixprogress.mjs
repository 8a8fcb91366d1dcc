// matrixprogress.mjs - a matrix's progress: the bar, "n of N runs done (k
// ok, ...) · elapsed · about t left" (the times tick on between events while
// it runs), and a notice of why a queued matrix waits or why an ended one
// did not succeed.

import { h } from './dom.mjs';
import { MATRIX_ENDED } from './format.mjs';
import { duration } from './time.mjs';

export class MatrixProgress {
  #at = 0;                 // when the shown progress arrived (Date.now())
  #waitingFor = null;      // why a queued matrix waits (matrix.state "waiting_for")
  #bar = h('progress', { class: 'mx-progress', max: 1, value: 0, 'aria-labelledby': 'mx-progress-text' });
  #text = h('p', { id: 'mx-progress-text', class: 'mx-progress-text' });
  #notice = h('p', { class: 'mx-notice', hidden: true });

  constructor() {
    this.nodes = [this.#bar, this.#text, this.#notice];
  }

  /** The page took d (a matrix or a matrix.state event's fields) as the matrix's state. */
  take(d) {
    if (d.progress) this.#at = Date.now();
    this.#waitingFor = d.state === 'queued' ? (d.waiting_for ?? (d.progress ? null : this.#waitingFor)) : null;
  }

  /** Show matrix m's progress (now: called every second while it runs). */
  draw(m) {
    const p = m.progress ?? {};
    const ticking = m.state === 'running';
    const gone = ticking ? (Date.now() - this.#at) / 1000 : 0;
    this.#bar.max = Math.max(p.total ?? 0, 1);
    this.#bar.value = p.done ?? 0;
    const parts = [`${p.done ?? 0} of ${p.total ?? 0} runs done`];
    const counts = ['ok', 'failed', 'canceled', 'interrupted'].filter((k) => p[k]).map((k) => `${p[k]} ${k}`);
    if (counts.length) parts[0] += ` (${counts.join(', ')})`;
    if (p.elapsed_s || ticking) parts.push(`${duration(((p.elapsed_s ?? 0) + gone) * 1000)} elapsed`);
    if (!MATRIX_ENDED.has(m.state) && p.remaining_s !== undefined) {
      parts.push(`about ${duration(Math.max((p.remaining_s ?? 0) - gone, 0) * 1000)} left`);
    }
    this.#text.textContent = parts.join(' · ');
    const why = m.state === 'queued' ? (this.#waitingFor ? `Waiting: ${this.#waitingFor}` : 'Queued: it starts when the runner is free.')
      : m.error && MATRIX_ENDED.has(m.state) && m.state !== 'succeeded' ? `${m.error.message}` : null;
    this.#notice.hidden = !why;
    this.#notice.textContent = why ?? '';
  }
}
