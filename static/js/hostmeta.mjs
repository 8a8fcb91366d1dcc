// hostmeta.mjs - the "Hosts" section of a matrix page: what each host was
// during the matrix (GET /api/v1/matrices/ID/hosts), one row per host and
// OS: release, CPU, memory, the data-plane NIC (driver, firmware, MTU),
// congestion control and socket buffers, forwarding; the exact command that
// collected it and a link to its raw output; what failed, said.  "Compare
// with matrix #" lists every value that differs from another matrix's hosts
// (GET .../hosts/diff?other=N), host by host and OS by OS.

import { api } from './api.mjs';
import { h, replace } from './dom.mjs';

/** The section for matrix id; refresh() reads the snapshots again (a new host or OS). */
export function hostsSection(id) {
  const body = h('tbody');
  const table = h('table', { class: 'mx-table hosts-meta-table' },
    h('caption', { class: 'visually-hidden' }, 'What each host was during this matrix'),
    h('thead', {}, h('tr', {}, ['host', 'OS', 'release', 'CPU', 'memory', 'NIC', 'MTU', 'congestion control',
      'socket buffers', 'forwarding'].map((c) => h('th', { scope: 'col' }, c)))),
    body);
  const details = h('div', { class: 'hosts-meta-commands' });
  const other = h('input', { id: 'hosts-diff-other', type: 'number', min: 1, step: 1, inputmode: 'numeric' });
  const diffButton = h('button', { type: 'submit' }, 'Show the differences');
  const diffOut = h('div', { class: 'hosts-diff', 'aria-live': 'polite' });
  const diffForm = h('form', { class: 'cmp-form hosts-diff-form', novalidate: true },
    h('div', { class: 'field' }, h('label', { for: 'hosts-diff-other' }, 'Compare the hosts with matrix #'), other),
    diffButton);
  const el = h('section', { class: 'mx-hosts', 'aria-labelledby': 'mx-hosts-title', hidden: true },
    h('h2', { id: 'mx-hosts-title' }, 'Hosts'),
    h('p', { class: 'help' }, 'Taken once per host and OS, before its first run in that OS (routers when the matrix starts).'),
    h('div', { class: 'table-wrap' }, table), details, diffForm, diffOut);
  let asked = 0;

  diffForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const n = Number(other.value);
    if (!Number.isInteger(n) || n < 1) {
      replace(diffOut, h('p', { class: 'field-error', role: 'alert' }, 'A matrix id is a whole number from 1.'));
      return;
    }
    diffButton.disabled = true;
    try {
      const { diff } = await api('GET', `matrices/${id}/hosts/diff?other=${n}`);
      replace(diffOut, drawDiff(diff));
    } catch (err) {
      if (err.status !== 401) replace(diffOut, h('p', { class: 'field-error', role: 'alert' }, `Could not compare with matrix ${n}: ${err.message}`));
    } finally {
      diffButton.disabled = false;
    }
  });

  async function refresh() {
    const mine = ++asked;
    try {
      const { hosts } = await api('GET', `matrices/${id}/hosts`);
      if (mine !== asked) return;
      el.hidden = hosts.length === 0;
      replace(body, hosts.map(row));
      replace(details, hosts.map(commandOf));
    } catch { /* the section stays as it was */ }
  }

  function commandOf(x) {
    const raw = `api/v1/matrices/${id}/hosts/raw?host=${encodeURIComponent(x.host)}&os=${encodeURIComponent(x.os)}`;
    const errors = x.metadata.errors ?? [];
    return h('details', { class: 'host-meta-cmd', dataset: { host: x.host, os: x.os } },
      h('summary', {}, `${x.host} as ${x.os}: the command`, errors.length ? ` (${errors.length} part${errors.length === 1 ? '' : 's'} failed)` : ''),
      h('pre', { class: 'cmd' }, x.command),
      errors.length ? h('ul', { class: 'meta-errors' }, errors.map((e) => h('li', {},
        h('code', {}, e.section), ` exit ${e.rc}`, e.message ? `: ${e.message}` : ''))) : null,
      h('a', { href: raw, download: `matrix-${id}-${x.host}-${x.os}.txt` }, 'Raw output'));
  }

  return { el, refresh };
}

function row(x) {
  const m = x.metadata ?? {};
  const nic = m.nic ?? {};
  const tcp = m.tcp ?? {};
  const td = (label, ...v) => h('td', { 'data-label': label }, ...v);
  const buffers = Array.isArray(tcp.rmem) ? `tcp_rmem ${tcp.rmem.join(' ')}, rmem_max ${tcp.rmem_max ?? '?'}`
    : tcp.maxsockbuf !== undefined ? `maxsockbuf ${tcp.maxsockbuf}, recvbuf_max ${tcp.recvbuf_max ?? '?'}` : '—';
  return h('tr', { dataset: { host: x.host, os: x.os } },
    td('host', x.host),
    td('OS', x.os, m.os?.name ? h('span', { class: 'muted' }, ` (${m.os.name})`) : null),
    td('release', h('code', {}, m.release ?? '—')),
    td('CPU', m.cpu ? `${m.cpu.count ?? '?'} × ${m.cpu.model ?? '?'}` : '—'),
    td('memory', typeof m.memory_bytes === 'number' ? `${(m.memory_bytes / 2 ** 30).toFixed(1)} GiB` : '—'),
    td('NIC', x.interface ? h('code', {}, x.interface) : '—',
      nic.driver ? ` ${nic.driver}${nic.driver_version ? ` ${nic.driver_version}` : ''}` : '',
      nic.firmware ? h('span', { class: 'muted' }, `, firmware ${nic.firmware}`) : ''),
    td('MTU', nic.mtu !== undefined ? String(nic.mtu) : '—'),
    td('congestion control', tcp.congestion_control ?? '—',
      tcp.congestion_available ? h('span', { class: 'muted' }, ` (of ${tcp.congestion_available.join(', ')})`) : ''),
    td('socket buffers', h('code', {}, buffers)),
    td('forwarding', m.forwarding ? [m.forwarding.ipv4 === undefined ? '—' : m.forwarding.ipv4 ? 'on' : 'off',
      m.forwarding.ipv6 === undefined ? '' : h('span', { class: 'muted' }, `, IPv6 ${m.forwarding.ipv6 ? 'on' : 'off'}`)] : '—'));
}

/** One line of what host x (a /hosts entry) was: release, NIC, MTU, congestion control. */
export function hostLine(x) {
  const m = x.metadata ?? {};
  const nic = m.nic ?? {};
  const parts = [m.os?.name ?? x.os, m.release, x.interface && [x.interface, nic.driver, nic.firmware && `firmware ${nic.firmware}`]
    .filter(Boolean).join(' '), nic.mtu !== undefined && `MTU ${nic.mtu}`, m.tcp?.congestion_control && `cc ${m.tcp.congestion_control}`];
  return `${x.host}@${x.os}: ${parts.filter(Boolean).join(', ')}`;
}

/** The differences between two matrices' hosts: one row per value. */
function drawDiff(diff) {
  const rows = [];
  for (const x of diff.hosts) {
    if (x.in !== 'both') {
      rows.push(h('tr', { dataset: { host: x.host, os: x.os } }, h('td', {}, `${x.host}@${x.os}`),
        h('td', { colspan: 3 }, x.in === 'matrix' ? `only in #${diff.matrix}` : `only in #${diff.other}`)));
      continue;
    }
    for (const d of x.differences) {
      const v = (val) => (val === undefined ? h('span', { class: 'muted' }, 'none') : h('code', {}, typeof val === 'string' ? val : JSON.stringify(val)));
      rows.push(h('tr', { dataset: { host: x.host, os: x.os, path: d.path } }, h('td', {}, `${x.host}@${x.os}`),
        h('td', {}, h('code', {}, d.path)), h('td', {}, v(d.matrix)), h('td', {}, v(d.other))));
    }
  }
  if (rows.length === 0) return h('p', { class: 'hosts-diff-none' }, `The hosts were the same in #${diff.matrix} and #${diff.other}.`);
  return h('div', { class: 'table-wrap' }, h('table', { class: 'mx-table hosts-diff-table' },
    h('caption', {}, `What differs between #${diff.matrix} and #${diff.other}`),
    h('thead', {}, h('tr', {}, ['host', 'value', `#${diff.matrix}`, `#${diff.other}`].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows)));
}
