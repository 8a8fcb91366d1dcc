// hostpersonas.mjs - the OS personas of one machine on its host card: each
// OS's ssh address and pinned host key, the one that answers now marked.

import { h, replace } from './dom.mjs';

export class HostPersonas {
  /** The list for host (empty until draw()). */
  constructor(host) {
    this.el = h('ul', { class: 'personas', 'aria-label': `OS personas of ${host.name}` });
  }

  /** Show host's personas; st (its state) says which one answers. */
  draw(host, st) {
    replace(this.el, Object.entries(host.os ?? {}).map(([name, p]) => {
      const answers = st.reachability === 'up' && st.os === name;
      return h('li', { class: ['persona', answers && 'answering'], dataset: { os: name } },
        h('div', { class: 'persona-head' },
          h('span', { class: 'os-name' }, name),
          answers ? h('span', { class: 'answers' }, 'answers') : null),
        h('div', { class: 'persona-addr' }, h('code', {}, `${p.user}@${p.address}:${p.port}`)),
        h('div', { class: 'persona-key' },
          h('span', { class: 'muted' }, 'host key '),
          p.host_key ? h('code', { class: 'fp' }, p.host_key) : h('span', { class: 'muted' }, 'none pinned')));
    }));
  }
}
