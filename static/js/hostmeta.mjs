// hostmeta.mjs - the "Hosts" section of a matrix page: what each host was
// during the matrix (GET /api/v1/matrices/ID/hosts), one row per host and
// OS: release, CPU, memory, the data-plane NIC (driver, firmware, MTU),
// congestion control and socket buffers, forwarding; the exact command that
// collected it and a link to its raw output; what failed, said.

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
  const el = h('section', { class: 'mx-hosts', 'aria-labelledby': 'mx-hosts-title', hidden: true },
    h('h2', { id: 'mx-hosts-title' }, 'Hosts'),
    h('p', { class: 'help' }, 'Taken once per host and OS, before its first run in that OS (routers when the matrix starts).'),
    h('div', { class: 'table-wrap' }, table), details);
  let asked = 0;

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
    td('forwarding', m.forwarding ? (m.forwarding.ipv4 ? 'on' : 'off') : '—'));
}

/** One line of what host x (a /hosts entry) was: release, NIC, MTU, congestion control. */
export function hostLine(x) {
  const m = x.metadata ?? {};
  const nic = m.nic ?? {};
  const parts = [m.os?.name ?? x.os, m.release, x.interface && [x.interface, nic.driver, nic.firmware && `firmware ${nic.firmware}`]
    .filter(Boolean).join(' '), nic.mtu !== undefined && `MTU ${nic.mtu}`, m.tcp?.congestion_control && `cc ${m.tcp.congestion_control}`];
  return `${x.host}@${x.os}: ${parts.filter(Boolean).join(', ')}`;
}
