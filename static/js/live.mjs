// live.mjs - the live event stream (GET /api/v1/events, server-sent events).
//
// EventSource reconnects by itself after a dropped connection and sends the
// id of the last event it saw as Last-Event-ID, so testbedd replays what was
// missed: nothing lost, nothing twice.  When the reply is an HTTP error
// (testbedd restarting behind a proxy, a 5xx) EventSource gives up instead;
// then this opens a new one with ?since=<last id> after a short back-off, and
// asks whoami whether the session is still alive.  A `reset` event means
// events were dropped from testbedd's replay buffer: listeners reload their
// state.
//
// States: 'connecting' (first connection), 'live', 'reconnecting', 'stopped'.

import { api } from './api.mjs';

const CLOSED = 2;   // EventSource.CLOSED

export class LiveStream extends EventTarget {
  #types;
  #params;
  #source;
  #es = null;
  #timer = null;
  #backoff = 1000;
  #opened = null;
  #resolveOpened = null;
  #onOnline = () => { if (this.state === 'reconnecting') this.#reopen(0); };

  /**
   * types: the event types to subscribe to, e.g. ['host.state'];
   * params: more filters for GET /api/v1/events, e.g. {matrix: 12};
   * source(url, names): what reads the stream, an EventSource or one with
   * its interface (the matrix page's, read by its plot worker: livecharts.mjs).
   */
  constructor(types, params = {}, { source = (url) => new EventSource(url) } = {}) {
    super();
    this.#types = types;
    this.#params = params;
    this.#source = source;
    this.state = 'stopped';
    this.lastId = null;
    this.#opened = new Promise((resolve) => { this.#resolveOpened = resolve; });
  }

  start() {
    if (this.state !== 'stopped') return;
    this.#setState('connecting');
    window.addEventListener('online', this.#onOnline);
    this.#open();
  }

  stop() {
    clearTimeout(this.#timer);
    window.removeEventListener('online', this.#onOnline);
    this.#es?.close();
    this.#es = null;
    this.#setState('stopped');
  }

  /** Resolves when the stream first opened, or after ms (whichever is first). */
  whenOpen(ms) {
    return Promise.race([this.#opened, new Promise((resolve) => setTimeout(resolve, ms))]);
  }

  #url() {
    const url = new URL('api/v1/events', document.baseURI);
    url.searchParams.set('type', this.#types.join(','));
    for (const [key, value] of Object.entries(this.#params)) url.searchParams.set(key, String(value));
    if (this.lastId !== null) url.searchParams.set('since', this.lastId);
    return url;
  }

  #open() {
    const es = this.#source(this.#url(), [...this.#types, 'stream', 'reset']);
    this.#es = es;
    es.addEventListener('open', () => {
      if (es !== this.#es) return;
      this.#backoff = 1000;
      this.#setState('live');
      this.#resolveOpened();
    });
    es.addEventListener('error', () => {
      if (es !== this.#es) return;
      this.#setState(this.state === 'connecting' && es.readyState !== CLOSED ? 'connecting' : 'reconnecting');
      if (es.readyState === CLOSED) this.#reopen(this.#backoff);
    });
    const deliver = (e) => {
      if (es !== this.#es) return;
      if (e.lastEventId) this.lastId = e.lastEventId;
      let event;
      try {
        event = JSON.parse(e.data);
      } catch {
        console.warn('testbedd: an event that is not JSON', e.type, e.data);
        return;
      }
      this.dispatchEvent(new CustomEvent(e.type, { detail: event }));
    };
    for (const type of this.#types) es.addEventListener(type, deliver);
    // where a live stream starts (testbedd's first record): resume from there
    es.addEventListener('stream', (e) => { if (es === this.#es && e.lastEventId) this.lastId = e.lastEventId; });
    es.addEventListener('reset', deliver);
  }

  /** EventSource gave up: check the session, then open a new one that resumes. */
  #reopen(delay) {
    clearTimeout(this.#timer);
    this.#es?.close();
    this.#es = null;
    this.#setState('reconnecting');
    this.#timer = setTimeout(async () => {
      try {
        await api('GET', 'whoami');
      } catch (err) {
        if (err.status === 401) { this.stop(); return; }  // api() told the app already
      }
      if (this.state === 'stopped') return;
      this.#backoff = Math.min(this.#backoff * 2, 8000);
      this.#open();
    }, delay);
  }

  #setState(state) {
    if (state === this.state) return;
    this.state = state;
    this.dispatchEvent(new CustomEvent('state', { detail: state }));
  }
}
