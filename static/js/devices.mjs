// devices.mjs - "Your devices" (#/devices, every role; the user name in the
// top bar links here): the browser sessions of the token you are logged in
// with (GET /api/v1/sessions), this one marked "This device", and an "End"
// button for each other one (DELETE /api/v1/sessions/{id}: that device is
// logged out and its live streams end; a lost phone).  Log out / End all
// sessions in the top bar stay the way to end this one or all of them.

import { api } from './api.mjs';
import { announce, h, replace } from './dom.mjs';
import { errorAlert } from './format.mjs';
import { absolute } from './time.mjs';

const when = (t) => h('time', { datetime: t, title: t }, absolute(t));

export function renderDevices(main, ctx) {
  let gone = false;
  const status = h('p', { class: 'muted', role: 'status' }, 'Loading your sessions…');
  const { el: error, show: showError } = errorAlert();
  const list = h('ul', { class: 'devices', 'aria-label': 'Your sessions' });

  function item(s) {
    const facts = [
      s.created_at ? ['logged in ', when(s.created_at)] : null,
      [s.remember ? 'remembered until ' : 'until ', when(s.expires_at)],
    ].filter(Boolean).flatMap((f, i) => (i ? [' · ', ...f] : f));
    let end = null;
    if (!s.current) {
      end = h('button', { type: 'button', 'aria-label': `End the session of ${s.device ?? 'an unknown browser'} (#${s.id})` }, 'End');
      end.addEventListener('click', async () => {
        end.disabled = true;
        try {
          await api('DELETE', `sessions/${s.id}`);
          announce('Session ended');
          await load();
        } catch (err) {
          end.disabled = false;
          showError(err, 'Ending the session');
        }
      });
    }
    return h('li', { class: 'device', dataset: { id: String(s.id), current: String(s.current) } },
      h('p', {}, h('strong', {}, s.device ?? 'Unknown browser'),
        s.current ? [' ', h('span', { class: 'badge badge-up' }, 'This device')] : null),
      h('p', { class: 'muted' }, facts),
      end ? h('p', { class: 'mx-buttons' }, end) : null);
  }

  async function load() {
    try {
      const { sessions } = await api('GET', 'sessions');
      if (gone) return;
      showError(null);
      replace(list, sessions.map(item));
      status.textContent = sessions.length === 1 ? 'Only this device is logged in.'
        : `${sessions.length} sessions of the token "${ctx.session?.name}"`;
    } catch (err) {
      if (gone) return;
      showError(err, 'Loading your sessions');
    }
  }

  replace(main, h('h1', {}, 'Your devices'),
    h('p', { class: 'muted' }, 'Browsers logged in with your token. End one you no longer use or have lost: ',
      'it is logged out at once.'),
    error, status, list);
  load();
  return () => { gone = true; };
}
