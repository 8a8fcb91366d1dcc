// inventory.mjs - the Inventory page (#/inventory, admin): what testbedd has
// loaded (the file, when, each machine without secrets), the last reload's
// result (by SIGHUP or by the button here: a bad file is refused and the old
// inventory kept), and a box to check proposed text the way --check-config
// does (FILE:LINE:COL).  The file on the control host stays the source of
// truth: nothing here writes it; edit it there, check it here, then reload.

import { api } from './api.mjs';
import { announce, h, replace } from './dom.mjs';
import { errorAlert, errorText, refusedToNonAdmin } from './format.mjs';
import { absolute } from './time.mjs';

export function renderInventory(main, ctx) {
  if (refusedToNonAdmin(main, ctx, 'Inventory', 'The inventory is')) return null;
  let gone = false;
  const { el: error, show: showError } = errorAlert();
  const summary = h('dl', { class: 'inv-summary' });
  const body = h('tbody');
  const table = h('table', { class: 'mx-table inv-machines' },
    h('caption', { class: 'visually-hidden' }, 'Machines of the loaded inventory'),
    h('thead', {}, h('tr', {}, ['Machine', 'Role', 'OS', 'Power', 'Links'].map(
      (t) => h('th', { scope: 'col' }, t)))),
    body);
  const reloadBtn = h('button', { type: 'button', onclick: reload }, 'Reload the file');
  const text = h('textarea', {
    id: 'inv-text', rows: 14, spellcheck: 'false', class: 'inv-text',
    placeholder: 'Paste the proposed inventory file here',
  });
  const checkBtn = h('button', { type: 'button', onclick: check }, 'Check');
  const verdict = h('div', { class: 'inv-verdict', role: 'status' });

  replace(main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Inventory'), reloadBtn),
    h('p', { class: 'muted' }, 'The inventory file on the control host is the source of truth: testbedd reads it, ',
      'never writes it. Edit it there, check it below, then reload (as SIGHUP does). A file with a mistake is refused ',
      'and the inventory in force stays.'),
    error, summary, h('div', { class: 'table-wrap' }, table),
    h('h2', {}, 'Check a proposed file'),
    h('label', { for: 'inv-text', class: 'visually-hidden' }, 'Proposed inventory file'),
    text, h('p', {}, checkBtn), verdict);

  async function load() {
    try {
      const reply = await api('GET', 'inventory');
      if (gone) return;
      showError(null);
      draw(summary, body, reply.inventory);
    } catch (err) {
      if (!gone) showError(err, 'Reading the inventory');
    }
  }

  async function reload() {
    reloadBtn.disabled = true;
    try {
      const reply = await api('POST', 'inventory/reload');
      showError(null);
      draw(summary, body, reply.inventory);
      announce('Inventory reloaded');
    } catch (err) {
      await load(); // the last reload's record: refused, the old inventory kept
      showError(err, 'Reload refused');
    } finally {
      reloadBtn.disabled = false;
    }
  }

  async function check() {
    checkBtn.disabled = true;
    try {
      const r = await api('POST', 'inventory/check', { text: text.value });
      if (r.ok) {
        replace(verdict, h('p', {}, h('span', { class: 'pill pill-ok' }, 'ok'), ` ${r.machines} machines`));
      } else {
        replace(verdict, h('p', {}, h('span', { class: 'pill pill-failed' }, 'mistake')),
          r.errors.map((e) => h('pre', { class: 'inv-error', dataset: { line: e.line, col: e.col } },
            e.line > 0 ? `line ${e.line}, column ${e.col}: ${e.message}` : e.message)));
        const e = r.errors[0];
        if (e && e.line > 0) selectLine(e.line);
      }
      announce(r.ok ? 'The proposed inventory is valid' : 'The proposed inventory has a mistake');
    } catch (err) {
      replace(verdict, h('p', { class: 'alert' }, errorText(err, 'Checking')));
    } finally {
      checkBtn.disabled = false;
    }
  }

  /** Put the caret on the mistake's line in the text box. */
  function selectLine(line) {
    const lines = text.value.split('\n');
    let start = 0;
    for (let i = 0; i < line - 1 && i < lines.length; i++) start += lines[i].length + 1;
    text.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
  }

  load();
  return () => { gone = true; };
}

/** Show inventory inv: its file and last reload in summary (a <dl>), its machines in body (a <tbody>). */
function draw(summary, body, inv) {
  const last = inv.last_reload;
  const lastNode = last === null ? h('span', { class: 'muted' }, 'none since testbedd started')
    : h('span', {},
      h('span', { class: `pill pill-${last.ok ? 'ok' : 'failed'}` }, last.ok ? 'ok' : 'refused'), ' ',
      absolute(last.at), ' by ', last.by,
      last.ok ? null : h('pre', { class: 'inv-error' }, `${last.error}\n(the old inventory was kept)`));
  replace(summary,
    h('dt', {}, 'File'), h('dd', {}, h('code', {}, inv.file)),
    h('dt', {}, 'Loaded'), h('dd', {}, absolute(inv.loaded_at)),
    h('dt', {}, 'Last reload'), h('dd', { class: 'inv-last' }, lastNode),
    h('dt', {}, 'Machines'), h('dd', {}, String(inv.machines.length)));
  replace(body, inv.machines.map((m) => h('tr', {},
    h('th', { scope: 'row' }, m.name),
    h('td', {}, m.role),
    h('td', {}, Object.entries(m.os ?? {}).map(([os, p]) => `${os} ${p.address}:${p.port}`).join(', ')),
    h('td', {}, (m.power ?? []).map((p) => p.driver).join(', ') || '—'),
    h('td', {}, Object.entries(m.links ?? {}).map(([n, l]) => `${n} ${l.address}`).join(', ') || '—'))));
}
