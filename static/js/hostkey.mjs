// hostkey.mjs - a host key the prober refused, on the host card: the key
// presented and the pinned one, and for an admin "Trust this key" (a modal
// asks once more, then POST /api/v1/hosts/NAME/trust pins it); the others
// are told that an admin can.

import { api } from './api.mjs';
import { announce, h } from './dom.mjs';

/**
 * The box for the key host's state st says was refused, or null.  trust:
 * {ctx, dialog (a TrustDialog), onTrusted(name, host)}: onTrusted gets the
 * host as the reply to the trust gives it.
 */
export function refusedKey(host, st, trust) {
  const pk = st.presented_host_key;
  if (!pk) return null;
  const pinned = host.os?.[pk.os]?.host_key;
  const box = h('div', { class: 'refused-key', role: 'group', 'aria-label': `Refused host key of ${host.name}` },
    h('p', {}, h('code', { class: 'code' }, 'host_key_mismatch'), ' ',
      h('strong', {}, pinned
        ? `${pk.os} presented a host key that differs from the pinned one:`
        : `${pk.os} presented a host key; none is pinned yet:`)),
    h('p', {}, h('code', { class: 'fp presented' }, pk.fingerprint)),
    pinned ? h('p', { class: 'help' }, 'pinned: ', h('code', { class: 'fp' }, pinned)) : null);
  if (trust.ctx.isAdmin()) {
    box.append(...trustControls(host.name, pk, trust));
  } else {
    box.append(h('p', { class: 'help' }, 'An admin can accept it after comparing it with the machine\'s own key.'));
  }
  return box;
}

/** What an admin sees under a refused key: how to compare it, the button, its error. */
function trustControls(name, pk, { dialog, onTrusted }) {
  const msg = h('p', { class: 'alert', role: 'alert', hidden: true });
  const button = h('button', { type: 'button', class: 'danger' }, 'Trust this key');
  button.addEventListener('click', async () => {
    if (!(await dialog.ask(name, pk))) return;
    button.disabled = true;
    msg.hidden = true;
    try {
      const reply = await api('POST', `hosts/${encodeURIComponent(name)}/trust`,
        { os: pk.os, fingerprint: pk.fingerprint });
      onTrusted(name, reply.host);
      announce(`${name}: the ${pk.os} host key is trusted now`);
    } catch (err) {
      button.disabled = false;
      msg.textContent = err.code === 'csrf_required'
        ? 'This tab has no CSRF token for your session: log out and log in again to make changes.'
        : `Not trusted: ${err.message}`;
      msg.hidden = false;
    }
  });
  return [
    h('p', { class: 'help' }, 'Compare it with the machine\'s own key before trusting it; on its console:'),
    h('pre', { class: 'cmd' }, h('code', {}, 'ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub')),
    button, msg,
  ];
}

/** A modal that shows the fingerprint once more and asks before trusting it. */
export class TrustDialog {
  #title = h('h2', { id: 'trust-title' });
  #fp = h('code', { class: 'fp' });
  #cancel = h('button', { type: 'submit', value: 'cancel', formnovalidate: true }, 'Cancel');

  constructor() {
    const confirm = h('button', { type: 'submit', value: 'trust', class: 'danger' }, 'Trust this key');
    this.el = h('dialog', { class: 'trust-dialog', 'aria-labelledby': 'trust-title' },
      h('form', { method: 'dialog' },
        this.#title,
        h('p', {}, 'testbedd will pin this fingerprint and from then on accept only this key:'),
        h('p', {}, this.#fp),
        h('p', { class: 'help' }, 'Trust it only if it is the key the machine itself shows.'),
        h('div', { class: 'buttons' }, this.#cancel, confirm)));
  }

  /** Ask whether to trust pk (the presented key) of machine name: true when the person confirms. */
  ask(name, pk) {
    const el = this.el;
    this.#title.textContent = `Trust the ${pk.os} host key of ${name}?`;
    this.#fp.textContent = pk.fingerprint;
    el.returnValue = '';
    el.showModal();
    this.#cancel.focus();
    return new Promise((resolve) => {
      el.addEventListener('close', () => resolve(el.returnValue === 'trust'), { once: true });
    });
  }
}
