// notifications.mjs - the Notifications page (#/notifications, admin): the
// notification rules with their state (ok, disabled, FAILING with the last
// error, messages pending), a form to create or edit one, a test button
// (POST /notifications/ID/test: the message is sent by testbedd's
// notifier, its outcome shows in the log) and a rule's delivery log.
//
// Secrets are never typed here: a rule names 0600 files in the control
// host's STATE_DIR/notify-secrets (HMAC key, bearer token, a secret URL, an
// SMTP password) that testbedd reads when sending.  A sink is a webhook (template json, ntfy, Slack,
// Matrix) or an email through an SMTP server.
// The list and an open log are re-read every 5 s while the page is shown.

import { api } from './api.mjs';
import { announce, h, replace } from './dom.mjs';
import { errorAlert, errorText, refusedToNonAdmin } from './format.mjs';
import { absolute } from './time.mjs';

const TRIGGERS = [
  ['matrix.ended', 'a matrix ended'],
  ['matrix.failed', 'a matrix failed'],
  ['matrix.canceled', 'a matrix was canceled'],
  ['matrix.interrupted', 'a matrix was interrupted'],
  ['run.failed', 'a run failed'],
  ['gate.failed', 'a CI gate failed'],
  ['host.down', 'a host went down'],
  ['host.up', 'a host came up'],
  ['bmc.mismatch', 'a host hangs (BMC mismatch)'],
  ['action.failed', 'a power or boot action failed'],
  ['idle.poweroff', 'an idle power-off'],
  ['wake.failed', 'a scheduled wake failed'],
  ['schedule.failed', 'a schedule could not start its matrix'],
];
const TEMPLATES = ['json', 'ntfy', 'slack', 'matrix'];
const FILES = [
  ['url_file', 'URL file', 'a 0600 file holding the URL, when the URL is itself a secret (Slack)'],
  ['hmac_key_file', 'HMAC key file', 'signs the body: X-Testbedd-Signature: sha256=HMAC(key, timestamp.body)'],
  ['token_file', 'Bearer token file', 'sent as Authorization: Bearer (ntfy, Matrix)'],
];
const POLL_MS = 5000;

export function renderNotifications(main, ctx) {
  if (refusedToNonAdmin(main, ctx, 'Notifications', 'Notification rules are')) return null;
  let rules = [];
  let logRule = null;   // the rule whose log is open
  let editing = null;   // the rule being edited (null: a new one)
  let timer = null;
  let gone = false;
  const status = h('p', { class: 'muted', role: 'status' }, 'Loading the rules…');
  const { el: error, show: showError } = errorAlert();
  const body = h('tbody');
  const table = h('table', { class: 'mx-table nf-rules', hidden: true },
    h('caption', { class: 'visually-hidden' }, 'Notification rules'),
    h('thead', {}, h('tr', {}, ['Name', 'Sink', 'Triggers', 'Filters', 'State', 'Pending', ''].map(
      (t) => h('th', { scope: 'col' }, t)))),
    body);
  const form = ruleForm(save, () => { editing = null; fillForm(form, null); });
  const log = h('section', { class: 'nf-log', 'aria-label': 'Delivery log', hidden: true });

  replace(main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Notifications')),
    h('p', { class: 'muted' }, 'Rules send a message to a webhook (generic JSON, ntfy, Slack or Matrix) or by email when something happens: ',
      'a matrix ends, a host drops or hangs. Messages go out in order and are retried; a rule whose messages keep failing is marked FAILING.'),
    error, status, h('div', { class: 'table-wrap' }, table),
    h('h2', { id: 'nf-form-title' }, 'New rule'), form.el, log);

  async function load() {
    try {
      const reply = await api('GET', 'notifications');
      if (gone) return;
      rules = reply.rules;
      drawRules();
      if (logRule !== null) await loadLog();
    } catch (err) {
      if (!gone) status.textContent = errorText(err, 'Cannot read the rules');
    }
  }

  function drawRules() {
    status.textContent = rules.length === 0 ? 'No rules yet: create one below.' : `${rules.length} rule${rules.length === 1 ? '' : 's'}.`;
    table.hidden = rules.length === 0;
    replace(body, rules.map((r) => h('tr', { dataset: { rule: r.id } },
      h('td', { 'data-label': 'Name' }, r.name),
      h('td', { 'data-label': 'Sink' }, sinkText(r.sink)),
      h('td', { 'data-label': 'Triggers' }, r.triggers.join(', ')),
      h('td', { 'data-label': 'Filters' }, filterText(r)),
      h('td', { 'data-label': 'State' }, stateNode(r)),
      h('td', { 'data-label': 'Pending', class: 'num' }, String(r.pending)),
      h('td', { 'data-label': 'Actions' },
        h('button', { type: 'button', onclick: () => edit(r) }, 'Edit'), ' ',
        h('button', { type: 'button', onclick: () => test(r) }, 'Test'), ' ',
        h('button', { type: 'button', onclick: () => openLog(r) }, 'Log'), ' ',
        h('button', { type: 'button', class: 'danger-quiet', onclick: () => remove(r) }, 'Delete')))));
  }

  function edit(r) {
    editing = r;
    fillForm(form, r);
    document.getElementById('nf-form-title').textContent = `Edit rule ${r.id} (${r.name})`;
    form.el.querySelector('input[name="name"]').focus();
  }

  async function save(rule) {
    try {
      const saved = editing === null ? await api('POST', 'notifications', rule)
        : await api('PUT', `notifications/${editing.id}`, rule);
      showError(null);
      announce(`Saved rule ${saved.name}`);
      editing = null;
      fillForm(form, null);
      document.getElementById('nf-form-title').textContent = 'New rule';
      await load();
    } catch (err) {
      form.fieldError(err);
    }
  }

  async function test(r) {
    try {
      const q = await api('POST', `notifications/${r.id}/test`);
      showError(null);
      announce(`Test message ${q.delivery} queued for ${r.name}`);
      await openLog(r);
    } catch (err) {
      showError(err, 'Test not sent');
    }
  }

  async function remove(r) {
    if (!window.confirm(`Delete the rule "${r.name}" and its delivery log?`)) return;
    try {
      await api('DELETE', `notifications/${r.id}`);
      if (logRule?.id === r.id) { logRule = null; log.hidden = true; }
      showError(null);
      await load();
    } catch (err) {
      showError(err, 'Not deleted');
    }
  }

  async function openLog(r) {
    logRule = r;
    await loadLog();
  }

  async function loadLog() {
    const r = logRule;
    try {
      const reply = await api('GET', `notifications/${r.id}/deliveries`);
      if (gone || logRule !== r) return;
      drawLog(log, r, reply.deliveries);
    } catch (err) {
      if (err.status === 404) { logRule = null; log.hidden = true; return; }
      showError(err, 'Cannot read the delivery log');
    }
  }

  const tick = () => {
    if (gone) return;
    load().finally(() => { if (!gone) timer = setTimeout(tick, POLL_MS); });
  };
  tick();
  return () => { gone = true; clearTimeout(timer); };
}

/** Show rule r's deliveries (list, newest first) in log, a section. */
function drawLog(log, r, list) {
  log.hidden = false;
  replace(log,
    h('h2', {}, `Delivery log of ${r.name}`),
    list.length === 0 ? h('p', { class: 'muted' }, 'Nothing sent yet.')
      : h('div', { class: 'table-wrap' }, h('table', { class: 'mx-table nf-deliveries' },
        h('caption', { class: 'visually-hidden' }, `Deliveries of ${r.name}, newest first`),
        h('thead', {}, h('tr', {}, ['#', 'Trigger', 'Message', 'State', 'Attempts', 'HTTP', 'Created', 'Last error'].map(
          (t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, list.map((d) => h('tr', { dataset: { delivery: d.id, state: d.state } },
          h('td', { 'data-label': '#', class: 'num' }, String(d.id)),
          h('td', { 'data-label': 'Trigger' }, d.trigger),
          h('td', { 'data-label': 'Message' }, d.title ?? ''),
          h('td', { 'data-label': 'State' }, deliveryState(d)),
          h('td', { 'data-label': 'Attempts', class: 'num' }, String(d.attempts)),
          h('td', { 'data-label': 'HTTP', class: 'num' }, d.last_status === null ? '–' : String(d.last_status)),
          h('td', { 'data-label': 'Created' }, absolute(d.created_at)),
          h('td', { 'data-label': 'Last error' }, d.last_error ?? '')))))));
}

function sinkText(s) {
  if (s.type === 'email') return `email → ${s.to.join(', ')}`;
  let where = 'URL from a file';
  if (s.url) {
    try { where = new URL(s.url).host; } catch { where = s.url; }
  }
  return `${s.template} → ${where}${s.hmac_key_file ? ' (signed)' : ''}`;
}

function filterText(r) {
  const parts = [];
  if (r.hosts.length) parts.push(`hosts ${r.hosts.join(', ')}`);
  if (r.matrices.length) parts.push(`matrices ${r.matrices.join(', ')}`);
  return parts.length ? parts.join('; ') : 'any';
}

function stateNode(r) {
  if (r.failing) {
    return h('span', { class: 'nf-failing' }, h('span', { class: 'badge badge-down' }, 'FAILING'),
      r.last_error ? h('span', { class: 'last-error' }, ` ${r.last_error}`) : null);
  }
  if (!r.enabled) return h('span', { class: 'badge badge-unknown' }, 'disabled');
  return h('span', { class: 'badge badge-up' }, 'ok');
}

function deliveryState(d) {
  const cls = d.state === 'delivered' ? 'badge-up' : d.state === 'failed' ? 'badge-down' : 'badge-unknown';
  const next = d.state === 'pending' && d.next_attempt_at ? ` (next ${absolute(d.next_attempt_at)})` : '';
  return h('span', {}, h('span', { class: `badge ${cls}` }, d.state), next);
}

// ---------------------------------------------------------------- the form

function field(name, label, input, help) {
  return h('div', { class: 'b-field', dataset: { field: name } },
    h('label', { for: `nf-${name}` }, label), input,
    help ? h('p', { class: 'help muted' }, help) : null);
}

function ruleForm(onSave, onReset) {
  const el = h('form', { class: 'builder nf-form', novalidate: true });
  const text = (name, attrs = {}) => h('input', { type: 'text', id: `nf-${name}`, name, autocomplete: 'off', ...attrs });
  const err = h('p', { class: 'b-error', role: 'alert', hidden: true });
  const kind = h('select', { id: 'nf-sink.type', name: 'type' }, h('option', { value: 'webhook' }, 'webhook'),
    h('option', { value: 'email' }, 'email'));
  const webhook = h('div', { class: 'nf-webhook' },
    h('div', { class: 'b-row' },
      field('sink.template', 'Template', h('select', { id: 'nf-sink.template', name: 'template' }, TEMPLATES.map((t) => h('option', { value: t }, t))))),
    h('div', { class: 'b-row' }, FILES.map(([k, label, help]) => field(`sink.${k}`, label,
      text(k, { id: `nf-sink.${k}`, placeholder: 'a name in notify-secrets/' }), help))));
  const email = h('div', { class: 'nf-email', hidden: true },
    h('div', { class: 'b-row' },
      field('sink.from', 'From', text('from', { id: 'nf-sink.from', placeholder: 'testbedd@example.org', inputmode: 'email' })),
      field('sink.to', 'To', text('to', { id: 'nf-sink.to', placeholder: 'me@example.org, you@example.org' }), 'one address or several, comma-separated')),
    h('div', { class: 'b-row' },
      field('sink.user', 'SMTP user', text('user', { id: 'nf-sink.user' })),
      field('sink.password_file', 'Password file', text('password_file', { id: 'nf-sink.password_file', placeholder: 'a name in notify-secrets/' }),
        'a 0600 file holding the SMTP password'),
      field('sink.tls', 'TLS', h('select', { id: 'nf-sink.tls', name: 'tls' }, h('option', { value: 'starttls' }, 'STARTTLS (required)'),
        h('option', { value: 'none' }, 'none (a relay on the LAN, no password)')))));
  const showKind = () => {
    webhook.hidden = kind.value !== 'webhook';
    email.hidden = kind.value !== 'email';
  };
  kind.addEventListener('change', showKind);
  const triggers = h('div', { class: 'b-checks', id: 'nf-triggers' }, TRIGGERS.map(([t, words]) => h('label', { class: 'b-check' },
    h('input', { type: 'checkbox', name: 'trigger', value: t }), ` ${words}`)));
  el.append(
    h('fieldset', {}, h('legend', {}, 'Rule'),
      h('div', { class: 'b-row' },
        field('name', 'Name', text('name', { maxlength: 63, required: true })),
        h('label', { class: 'b-check' }, h('input', { type: 'checkbox', name: 'enabled', checked: true }), ' enabled')),
      h('div', { dataset: { field: 'triggers' } }, h('p', { class: 'spec-label' }, 'When'), triggers),
      h('div', { class: 'b-row' },
        field('hosts', 'Only hosts', text('hosts', { placeholder: 'left, right' }), 'empty: any host'),
        field('matrices', 'Only matrices', text('matrices', { placeholder: '12, 13' }), 'empty: any matrix'))),
    h('fieldset', {}, h('legend', {}, 'Send to'),
      h('p', { class: 'help muted' }, 'Secret files are named by their name in STATE_DIR/notify-secrets/ on the control host (one line, mode 0600); testbedd reads no other file for a rule and never shows their content.'),
      h('div', { class: 'b-row' },
        field('sink.type', 'Kind', kind),
        field('sink.url', 'URL', text('url', { id: 'nf-sink.url', placeholder: 'https://ntfy.sh/my-testbed', inputmode: 'url' }),
          'a webhook: http(s); for Matrix, the room\'s send/m.room.message URL; email: smtp://host:587 or smtps://')),
      webhook, email,
      h('div', { class: 'b-row' },
        field('sink.allow_private_host', 'Allow a private host', text('allow_private_host', { id: 'nf-sink.allow_private_host' }),
          'the URL\'s host, only to send to loopback or link-local (a receiver on this machine)'))),
    err,
    h('div', { class: 'b-row' }, h('button', { type: 'submit' }, 'Save rule'), h('button', { type: 'reset' }, 'Clear')));
  el.addEventListener('submit', (e) => {
    e.preventDefault();
    showFieldError(null);
    onSave(readForm(el));
  });
  el.addEventListener('reset', (e) => {
    e.preventDefault();
    showFieldError(null);
    onReset();
  });
  function showFieldError(apiErr) {
    for (const x of el.querySelectorAll('[aria-invalid]')) x.removeAttribute('aria-invalid');
    err.hidden = apiErr === null;
    if (apiErr === null) return;
    err.textContent = errorText(apiErr, 'Not saved');
    const box = el.querySelector(`[data-field="${CSS.escape(apiErr.field)}"]`);
    const input = box?.querySelector('input, select');
    if (input) { input.setAttribute('aria-invalid', 'true'); input.focus(); }
  }
  return { el, fieldError: showFieldError, showKind };
}

function list(s) {
  return s.split(/[\s,]+/).filter((x) => x !== '');
}

function readForm(el) {
  const v = (name) => el.elements[name].value.trim();
  const sink = { type: v('type') };
  if (v('url')) sink.url = v('url');
  if (sink.type === 'email') {
    sink.from = v('from');
    sink.to = list(v('to'));
    if (v('user')) sink.user = v('user');
    if (v('password_file')) sink.password_file = v('password_file');
    sink.tls = v('tls');
  } else {
    sink.template = v('template');
    for (const [k] of FILES) if (v(k)) sink[k] = v(k);
  }
  if (v('allow_private_host')) sink.allow_private_host = v('allow_private_host');
  return {
    name: v('name'),
    enabled: el.elements.enabled.checked,
    triggers: [...el.querySelectorAll('input[name="trigger"]:checked')].map((x) => x.value),
    hosts: list(v('hosts')),
    matrices: list(v('matrices')).map((x) => (/^\d+$/.test(x) ? Number(x) : x)),
    sink,
  };
}

function fillForm(form, r) {
  const el = form.el;
  el.elements.name.value = r?.name ?? '';
  el.elements.enabled.checked = r?.enabled ?? true;
  for (const x of el.querySelectorAll('input[name="trigger"]')) x.checked = r?.triggers.includes(x.value) ?? false;
  el.elements.hosts.value = r?.hosts.join(', ') ?? '';
  el.elements.matrices.value = r?.matrices.join(', ') ?? '';
  el.elements.type.value = r?.sink.type ?? 'webhook';
  el.elements.template.value = r?.sink.template ?? 'json';
  el.elements.url.value = r?.sink.url ?? '';
  for (const [k] of FILES) el.elements[k].value = r?.sink[k] ?? '';
  el.elements.from.value = r?.sink.from ?? '';
  el.elements.to.value = r?.sink.to?.join(', ') ?? '';
  el.elements.user.value = r?.sink.user ?? '';
  el.elements.password_file.value = r?.sink.password_file ?? '';
  el.elements.tls.value = r?.sink.tls ?? 'starttls';
  form.showKind();
  el.elements.allow_private_host.value = r?.sink.allow_private_host ?? '';
  form.fieldError(null);
  if (r === null) document.getElementById('nf-form-title').textContent = 'New rule';
}
