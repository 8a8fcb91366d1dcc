// devices.mjs - "Your devices" (#/devices, every role; the user name in the
// top bar links here): the browser sessions of the token you are logged in
// with (GET /api/v1/sessions), this one marked "This device", and an "End"
// button for each other one (DELETE /api/v1/sessions/{id}: that device is
// logged out and its live streams end; a lost phone).  Each says when and
// from which address it was last used (to the minute: testbedd notes a use
// at most once a minute) and, remembered, until when it lasts unused (30
// days after its last use).  "Log out everywhere" ends every one of them,
// this one too: it is the top bar's "End all sessions" (one flow, app.mjs:
// DELETE /api/v1/sessions, then the login page saying so).

import { api } from './api.mjs';
import { announce, h, replace } from './dom.mjs';
import { errorAlert } from './format.mjs';
import { absolute, since } from './time.mjs';

const when = (t) => h('time', { datetime: t, title: t }, absolute(t));
// "3 min ago", or "just now" within the minute a use is noted to
const ago = (t) => h('time', { datetime: t, title: absolute(t) },
  Date.now() - Date.parse(t) < 60_000 ? 'just now' : `${since(t)} ago`);

export function renderDevices(main, ctx) {
  let gone = false;
  const status = h('p', { class: 'muted', role: 'status' }, 'Loading your sessions…');
  const { el: error, show: showError } = errorAlert();
  const list = h('ul', { class: 'devices', 'aria-label': 'Your sessions' });

  function item(s) {
    const facts = [
      s.created_at ? ['logged in ', when(s.created_at)] : null,
      [s.remember ? 'remembered until ' : 'until ', when(s.expires_at),
        s.remember ? ' unless used' : null].filter(Boolean),
    ].filter(Boolean).flatMap((f, i) => (i ? [' · ', ...f] : f));
    const used = s.last_used_at
      ? h('p', { class: 'muted device-used' }, 'last used ', ago(s.last_used_at),
        s.last_address ? [' from ', h('span', { class: 'addr' }, s.last_address)] : null)
      : null;
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
      h('p', { class: 'muted' }, facts), used,
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

  const everywhere = h('button', { type: 'button', class: 'danger' }, 'Log out everywhere');
  everywhere.addEventListener('click', () => {
    if (!window.confirm('Log out every browser of your token, this one too? Their live views end now.')) return;
    document.getElementById('logout-all')?.click();
  });

  replace(main, h('h1', {}, 'Your devices'),
    h('p', { class: 'muted' }, 'Browsers logged in with your token. End one you no longer use or have lost: ',
      'it is logged out at once.'),
    error, status, list,
    h('p', { class: 'mx-buttons' }, everywhere,
      h('span', { class: 'muted' }, ' every session of your token, this one too (your token stays valid)')));
  load();
  return () => { gone = true; };
}
