// hostfacts.mjs - what the inventory says about one machine, at the foot of
// its host card: boot loader and entries (and GRUB's saved default when grubenv
// says another OS), power drivers, MAC, console, data links, idle power-off
// and wake schedule (a <dl>, or nothing).

import { h } from './dom.mjs';

/** The facts of host (a GET /api/v1/hosts entry) as a <dl>, or null when there are none. */
export function hostFacts(host) {
  const rows = [];
  const add = (term, ...value) => rows.push(h('dt', {}, term), h('dd', {}, ...value));
  if (host.boot) {
    add('boot', h('code', {}, host.boot.loader), ', default ', h('strong', {}, host.boot.default), ': ',
      joined(Object.entries(host.boot.entries ?? {}).map(([os, entry]) =>
        [os, ' → ', h('code', {}, entry)])));
    // GRUB's saved default read back from grubenv, when it says another OS
    const sd = host.boot.saved_default;
    if (sd?.mismatch) {
      add('GRUB default', h('span', { class: 'default-mismatch' },
        'grubenv says ', h('strong', {}, sd.os), ' (', h('code', {}, `saved_entry=${sd.entry}`),
        `), not the inventory's ${host.boot.default}: boots are planned from grubenv`));
    }
  }
  if (host.power?.length) add('power', joined(host.power.map(powerText), '; '));
  if (host.mac) add('MAC', h('code', {}, host.mac));
  if (host.console) add('console', consoleText(host.console));
  const links = Object.entries(host.links ?? {});
  if (links.length) {
    add('links', joined(links.map(([name, l]) => [
      h('strong', {}, name), ' ', h('code', {}, l.address),
      Object.keys(l.ifname ?? {}).length
        ? [' (', joined(Object.entries(l.ifname).map(([os, ifn]) => [os, ' ', h('code', {}, ifn)])), ')']
        : null,
    ]), '; '));
  }
  if (host.idle_poweroff_min) add('idle', `powered off after ${host.idle_poweroff_min} min`);
  if (host.wake_schedule) add('wake', h('code', {}, host.wake_schedule));
  return rows.length ? h('dl', { class: 'facts' }, rows) : null;
}

function joined(parts, sep = ', ') {
  const out = [];
  parts.forEach((p, i) => { if (i) out.push(sep); out.push(p); });
  return out;
}

function powerText(p) {
  if (p.driver === 'ipmi') return ['IPMI ', h('code', {}, `${p.user}@${p.address}:${p.port}`), ` cipher ${p.cipher_suite}`];
  if (p.driver === 'wol') {
    if (p.via === 'relay') return ['Wake-on-LAN via ', h('strong', {}, p.relay), ' ', h('code', {}, `${p.command} -i ${p.interface}`)];
    if (p.via === 'raw') return ['Wake-on-LAN raw frame out of ', h('code', {}, p.interface)];
    return [`Wake-on-LAN ${p.via} to `, h('code', {}, `${p.target}:${p.port}`), p.source ? [' from ', h('code', {}, p.source)] : null];
  }
  if (p.driver === 'redfish') {
    return ['Redfish ', h('code', {}, `${p.user}@${p.url}`), p.system ? [' system ', h('code', {}, p.system)] : null,
      ` (${p.auth} auth)`, p.insecure
        ? [' ', h('strong', { class: 'insecure', title: 'insecure: true in the inventory' }, 'TLS certificate NOT checked')]
        : p.ca_file ? ' TLS checked against its CA file' : ' TLS checked'];
  }
  if (p.driver === 'command') {
    return ['command (', (p.actions ?? []).join(', '), ')', p.address ? [' at ', h('code', {}, p.address)] : null];
  }
  return h('code', {}, p.driver);
}

function consoleText(c) {
  if (c.type === 'tcp') return ['TCP ', h('code', {}, `${c.address}:${c.port}`)];
  if (c.type === 'device') return [h('code', {}, c.device), ` at ${c.speed} baud`];
  if (c.type === 'ipmi-sol') return 'IPMI serial over LAN';
  return h('code', {}, c.type);
}
