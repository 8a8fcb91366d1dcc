// admin.mjs - the Admin page (#/admin[/tokens|/sessions|/audit|/actions], admin role):
// what otherwise needs tbctl or curl.
//
//   tokens:  create one with a role (its secret is shown once, in this page
//            only, and forgotten when the page is left or "Done" pressed;
//            testbedd keeps only its hash), the list, revoke (its sessions
//            and event streams end at once);
//   sessions: every user's browser sessions (GET /sessions?all=1): whose
//            (token name), browser, logged in, last used and from where,
//            until when; Revoke ends one (DELETE /sessions/{id}: that browser
//            is logged out and its live streams end; audited naming its
//            owner) - a lost phone whose owner cannot log in to end it;
//   audit:   GET /audit with its filters (actor, host, action, since),
//            50 a page, newest first, "Older" pages by ?before=<last id>;
//   actions: GET /actions (power and boot), optionally of one host.

import { api } from './api.mjs';
import { announce, h, replace } from './dom.mjs';
import { errorAlert, errorText, refusedToNonAdmin, statePill } from './format.mjs';
import { absolute } from './time.mjs';

const TABS = [['tokens', 'Tokens'], ['sessions', 'Sessions'], ['audit', 'Audit log'], ['actions', 'Actions']];
const ROLES = ['viewer', 'operator', 'admin'];
const PAGE = 50;

export function renderAdmin(main, ctx, rest) {
  const tab = TABS.some(([t]) => t === rest) ? rest : 'tokens';
  const head = [h('h1', {}, 'Admin'),
    h('nav', { class: 'pager', 'aria-label': 'Admin sections' }, TABS.map(([t, label]) => h('a', {
      href: `#/admin/${t}`, 'aria-current': t === tab ? 'page' : undefined,
    }, label)))];
  if (refusedToNonAdmin(main, ctx, 'Admin', 'These pages are')) return null;
  const section = h('section', { 'aria-label': TABS.find(([t]) => t === tab)[1] });
  replace(main, ...head, section);
  if (tab === 'audit') return renderAudit(section);
  if (tab === 'actions') return renderActions(section);
  if (tab === 'sessions') return renderSessions(section);
  return renderTokens(section, ctx);
}

function field(id, label, input, help) {
  input.id = `adm-${id}`;
  return h('div', { class: 'b-field' }, h('label', { for: `adm-${id}` }, label), input,
    help ? h('p', { class: 'help muted' }, help) : null);
}

function table(caption, cols, cls = '') {
  const body = h('tbody');
  const el = h('table', { class: `mx-table ${cls}`, hidden: true },
    h('caption', { class: 'visually-hidden' }, caption),
    h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col' }, c)))), body);
  return { el, body };
}

const when = (t) => (t ? h('time', { datetime: t, title: t }, absolute(t)) : '—');

// ---- tokens -------------------------------------------------------------------------

function renderTokens(section, ctx) {
  let gone = false;
  const status = h('p', { class: 'muted', role: 'status' }, 'Loading the tokens…');
  const { el: error, show: showError } = errorAlert();
  const { el, body } = table('API tokens', ['ID', 'Name', 'Role', 'Created', 'Last used', 'State', ''], 'adm-tokens');
  const name = h('input', { type: 'text', name: 'name', maxlength: 63, autocomplete: 'off', required: true });
  const role = h('select', { name: 'role' }, ROLES.map((r) => h('option', { value: r }, r)));
  const formErr = h('p', { class: 'b-error', role: 'alert', hidden: true });
  const shown = h('div', { class: 'notice adm-secret', hidden: true, role: 'region', 'aria-label': 'New token' });
  const form = h('form', { class: 'builder adm-token-form', novalidate: true },
    h('fieldset', {}, h('legend', {}, 'New token'),
      h('div', { class: 'b-row' },
        field('token-name', 'Name', name, '1..63 of A-Z a-z 0-9 - _ .'),
        field('token-role', 'Role', role)),
      formErr,
      h('button', { type: 'submit' }, 'Create token')));

  const forget = () => {
    // the secret lives in this element only: drop it
    replace(shown);
    shown.hidden = true;
  };
  const showSecret = (tok, secret) => {
    // <wbr> every 12 characters: a phone wraps the secret, a copy has none
    const code = h('code', { class: 'adm-secret-value' },
      secret.match(/.{1,12}/g).flatMap((part) => [part, h('wbr')]));
    const copy = h('button', { type: 'button' }, 'Copy');
    copy.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(secret);
        announce('Copied');
        copy.textContent = 'Copied';
      } catch {
        const r = document.createRange();
        r.selectNodeContents(code);
        getSelection().removeAllRanges();
        getSelection().addRange(r);
      }
    });
    const done = h('button', { type: 'button' }, 'Done');
    done.addEventListener('click', forget);
    replace(shown,
      h('p', {}, h('strong', {}, `Token "${tok.name}" (${tok.role})`),
        ': copy it now. It is shown this once; testbedd keeps only its hash.'),
      h('p', {}, code), h('p', { class: 'mx-buttons' }, copy, done));
    shown.hidden = false;
    done.focus();
  };

  async function load() {
    try {
      const { tokens } = await api('GET', 'tokens');
      if (gone) return;
      showError(null);
      replace(body, tokens.map((t) => tokenRow(t)));
      el.hidden = tokens.length === 0;
      status.textContent = tokens.length === 0 ? 'No tokens.' : `${tokens.length} tokens`;
    } catch (err) {
      if (gone) return;
      showError(err, 'Loading the tokens');
    }
  }

  function tokenRow(t) {
    const revoke = h('button', { type: 'button', disabled: t.revoked }, 'Revoke');
    revoke.addEventListener('click', async () => {
      const me = t.name === ctx.session?.name ? ' This is the token you are logged in with: you will be logged out.' : '';
      if (!window.confirm(`Revoke the token "${t.name}"? Its sessions and event streams end now.${me}`)) return;
      revoke.disabled = true;
      try {
        await api('DELETE', `tokens/${t.id}`);
        announce(`Token ${t.name} revoked`);
        await load();
      } catch (err) {
        revoke.disabled = false;
        showError(err, 'Revoking');
      }
    });
    return h('tr', { dataset: { id: String(t.id), revoked: String(t.revoked) } },
      h('td', { class: 'num' }, String(t.id)), h('td', { class: 'mx-name' }, t.name),
      h('td', {}, h('span', { class: `role role-${t.role}` }, t.role)),
      h('td', {}, when(t.created_at)), h('td', {}, when(t.last_used_at)),
      h('td', {}, t.revoked ? 'revoked' : 'active'), h('td', {}, t.revoked ? '' : revoke));
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    forget();
    formErr.hidden = true;
    name.removeAttribute('aria-invalid');
    const button = form.querySelector('button[type="submit"]');
    button.disabled = true;
    try {
      const r = await api('POST', 'tokens', { name: name.value.trim(), role: role.value });
      name.value = '';
      showSecret(r.token, r.secret);
      await load();
    } catch (err) {
      formErr.textContent = errorText(err, 'Creating the token');
      formErr.hidden = false;
      if (err.field === 'name') name.setAttribute('aria-invalid', 'true');
    } finally {
      button.disabled = false;
    }
  });

  section.append(form, shown, error, status, h('div', { class: 'table-wrap' }, el));
  load();
  return () => { gone = true; forget(); };
}

// ---- sessions ----------------------------------------------------------------------

function renderSessions(section) {
  let gone = false;
  const status = h('p', { class: 'muted', role: 'status' }, 'Loading the sessions…');
  const { el: error, show: showError } = errorAlert();
  const { el, body } = table('Every browser session',
    ['ID', 'User', 'Browser', 'Logged in', 'Last used', 'From', 'Ends', ''], 'adm-sessions');

  async function load() {
    try {
      const { sessions } = await api('GET', 'sessions?all=1');
      if (gone) return;
      showError(null);
      replace(body, sessions.map(sessionRow));
      el.hidden = sessions.length === 0;
      const users = new Set(sessions.map((s) => s.token.name)).size;
      status.textContent = sessions.length === 0 ? 'No sessions.'
        : `${sessions.length} ${sessions.length === 1 ? 'session' : 'sessions'} of ${users} ${users === 1 ? 'user' : 'users'}`;
    } catch (err) {
      if (gone) return;
      showError(err, 'Loading the sessions');
    }
  }

  function sessionRow(s) {
    const who = s.device ?? 'an unknown browser';
    let end = '';
    if (!s.current) {
      end = h('button', { type: 'button', 'aria-label': `Revoke the session of ${s.token.name} on ${who} (#${s.id})` }, 'Revoke');
      end.addEventListener('click', async () => {
        if (!window.confirm(`End the session of "${s.token.name}" on ${who}? That browser is logged out and its live views end now.`)) return;
        end.disabled = true;
        try {
          await api('DELETE', `sessions/${s.id}`);
          announce(`Session of ${s.token.name} ended`);
          await load();
        } catch (err) {
          end.disabled = false;
          showError(err, 'Revoking the session');
        }
      });
    }
    return h('tr', { dataset: { id: String(s.id), user: s.token.name, current: String(s.current) } },
      h('td', { class: 'num', 'data-label': 'id' }, String(s.id)),
      h('td', { class: 'mx-name', 'data-label': 'user' }, s.token.name),
      h('td', { 'data-label': 'browser' }, s.device ?? '—',
        s.current ? [' ', h('span', { class: 'badge badge-up' }, 'This device')] : null),
      h('td', { 'data-label': 'logged in' }, when(s.created_at)),
      h('td', { 'data-label': 'last used' }, when(s.last_used_at)),
      h('td', { class: 'addr', 'data-label': 'from' }, s.last_address ?? '—'),
      h('td', { 'data-label': s.remember ? 'ends unless used' : 'ends' }, when(s.expires_at),
        s.remember ? h('span', { class: 'muted' }, ' (remembered)') : null),
      h('td', {}, end));
  }

  section.append(h('p', { class: 'muted' }, 'Every browser logged in, of every user. Revoke ends one at once ',
    '(a lost phone); revoking a token ends all of its sessions.'),
  error, status, h('div', { class: 'table-wrap' }, el));
  load();
  return () => { gone = true; };
}

// ---- audit --------------------------------------------------------------------------

function renderAudit(section) {
  let gone = false;
  let pages = [0];      // the "before" of each page shown so far (0: the newest)
  let last = null;      // the id of the last row shown
  const inputs = {
    actor: h('input', { type: 'text', name: 'actor', autocomplete: 'off' }),
    host: h('input', { type: 'text', name: 'host', autocomplete: 'off' }),
    action: h('input', { type: 'text', name: 'action', autocomplete: 'off', placeholder: 'token.create' }),
    since: h('input', { type: 'text', name: 'since', autocomplete: 'off', placeholder: '2026-12-04T10:00:00Z' }),
  };
  const status = h('p', { class: 'muted', role: 'status' }, 'Loading the audit log…');
  const { el: error, show: showError } = errorAlert();
  const { el, body } = table('Audit log', ['When', 'Actor', 'Client', 'Action', 'Target', 'Status', 'Result'], 'adm-audit');
  const newer = h('button', { type: 'button', disabled: true }, 'Newer');
  const older = h('button', { type: 'button', disabled: true }, 'Older');
  const where = h('span', { class: 'muted' }, '');
  const form = h('form', { class: 'builder adm-filters', novalidate: true },
    h('fieldset', {}, h('legend', {}, 'Filters'),
      h('div', { class: 'b-row' },
        field('actor', 'Actor (token name)', inputs.actor),
        field('host', 'Host (target)', inputs.host),
        field('action', 'Action', inputs.action),
        field('since', 'Since', inputs.since, 'RFC 3339, UTC')),
      h('button', { type: 'submit' }, 'Filter')));

  async function load(before) {
    const q = new URLSearchParams({ limit: String(PAGE) });
    for (const [k, input] of Object.entries(inputs)) if (input.value.trim()) q.set(k, input.value.trim());
    if (before) q.set('before', String(before));
    try {
      const { audit } = await api('GET', `audit?${q}`);
      if (gone) return;
      showError(null);
      replace(body, audit.map((r) => h('tr', { dataset: { id: String(r.id) } },
        h('td', {}, when(r.at)), h('td', {}, r.actor), h('td', {}, r.remote),
        h('td', {}, h('span', { title: `${r.method} ${r.path}` }, r.action)), h('td', {}, r.target),
        h('td', { class: 'num' }, String(r.status)), h('td', {}, r.result))));
      el.hidden = audit.length === 0;
      last = audit.length > 0 ? audit[audit.length - 1].id : null;
      older.disabled = audit.length < PAGE;
      newer.disabled = pages.length <= 1;
      where.textContent = `page ${pages.length}`;
      status.textContent = audit.length === 0 ? 'No entries.' : `${audit.length} entries, ids ${audit[0].id}…${last}`;
    } catch (err) {
      if (gone) return;
      showError(err, 'Loading the audit log');
    }
  }
  older.addEventListener('click', () => { pages.push(last); load(last); });
  newer.addEventListener('click', () => { pages.pop(); load(pages[pages.length - 1]); });
  form.addEventListener('submit', (e) => { e.preventDefault(); pages = [0]; load(0); });

  section.append(form, error, status, h('div', { class: 'table-wrap' }, el),
    h('nav', { class: 'pager', 'aria-label': 'Pages of the audit log' }, newer, where, older));
  load(0);
  return () => { gone = true; };
}

// ---- actions ------------------------------------------------------------------------

function renderActions(section) {
  let gone = false;
  const host = h('input', { type: 'text', name: 'host', autocomplete: 'off' });
  const status = h('p', { class: 'muted', role: 'status' }, 'Loading the actions…');
  const { el: error, show: showError } = errorAlert();
  const { el, body } = table('Power and boot actions', ['ID', 'Host', 'What', 'State', 'By', 'Created', 'Took', 'Error'], 'adm-actions');
  const form = h('form', { class: 'builder adm-filters', novalidate: true },
    h('div', { class: 'b-row' }, field('act-host', 'Host', host, 'empty: every host'),
      h('button', { type: 'submit' }, 'Show')));

  const what = (a) => `${a.kind} ${Object.entries(a.params ?? {}).map(([k, v]) => `${k}=${v}`).join(' ')}`;
  async function load() {
    const q = new URLSearchParams({ limit: '200' });
    if (host.value.trim()) q.set('host', host.value.trim());
    try {
      const { actions } = await api('GET', `actions?${q}`);
      if (gone) return;
      showError(null);
      replace(body, actions.map((a) => h('tr', { dataset: { id: String(a.id) } },
        h('td', { class: 'num' }, String(a.id)), h('td', {}, a.host), h('td', {}, what(a)),
        h('td', {}, statePill(a.state)), h('td', {}, a.actor), h('td', {}, when(a.created_at)),
        h('td', { class: 'num' }, a.duration_ms == null ? '—' : `${(a.duration_ms / 1000).toFixed(1)} s`),
        h('td', {}, a.error?.message ?? ''))));
      el.hidden = actions.length === 0;
      status.textContent = actions.length === 0 ? 'No actions.' : `${actions.length} actions, newest first`;
    } catch (err) {
      if (gone) return;
      showError(err, 'Loading the actions');
    }
  }
  form.addEventListener('submit', (e) => { e.preventDefault(); load(); });
  section.append(form, error, status, h('div', { class: 'table-wrap' }, el));
  load();
  return () => { gone = true; };
}
