// hostrefresh.mjs - the parts of a host that change without an event of
// their own: the BMC's view ("checked 12 s ago"), the idle power-off
// countdown and the wake schedule's next time.  reread(name) reads one
// machine again 300 ms later (once for a burst of events about it); every
// 15 s the whole list is read again.  Each host read goes to onHost(name, host).

import { api } from './api.mjs';

export class HostRefresh {
  #known;
  #active;
  #onHost;
  #timers = new Map();     // name -> the timeout of its pending reread
  #poller;

  /** known(name): a machine on the page; active(): the page has its list; onHost(name, host). */
  constructor({ known, active, onHost }) {
    this.#known = known;
    this.#active = active;
    this.#onHost = onHost;
    this.#poller = setInterval(() => this.#poll(), 15_000);
  }

  stop() {
    clearInterval(this.#poller);
    for (const t of this.#timers.values()) clearTimeout(t);
  }

  /** Read machine name again soon (its state or an action changed). */
  reread(name) {
    if (!this.#known(name) || this.#timers.has(name)) return;
    this.#timers.set(name, setTimeout(async () => {
      this.#timers.delete(name);
      try {
        const { host } = await api('GET', `hosts/${encodeURIComponent(name)}`);
        this.#onHost(name, host);
      } catch { /* the next event or poll tries again */ }
    }, 300));
  }

  async #poll() {
    if (!this.#active()) return;
    try {
      const reply = await api('GET', 'hosts');
      for (const host of reply.hosts) this.#onHost(host.name, host);
    } catch { /* next time */ }
  }
}
