// builder.mjs - the matrix builder: a form over the matrix spec, kept in
// step with the JSON beside it (matrices.mjs).  The form owns the keys it
// shows; set(spec) fills it from a spec, read(base) writes them into a copy
// of base, so keys the form does not show (caps, groups, a seed) survive.
//
// Pairs and links come from the inventory (GET /hosts); OS combinations are
// rows with an OS per machine of the pairs ("as it is" leaves a machine
// out of that combination).  A parameter field takes one value or several
// separated by spaces: several sweep it (the cross product).  The API's
// validation error names a field ("iperf.parallel[1]", "pairs[0].server"):
// fieldError() shows it at the form field that holds it.

import { h, replace } from './dom.mjs';

const PROTOCOLS = ['tcp', 'udp'];
const DIRECTIONS = ['forward', 'reverse', 'bidir'];
const TOOLS = ['iperf3', 'iperf2', 'netperf', 'netperf-rr']; // the spec's "tool": several ticked compare them cell by cell (netperf-rr: TCP_RR)
const FAMILIES = ['ipv4', 'ipv6']; // the spec's "family": ipv6 needs the links' address6
const ORDERS = ['interleaved', 'sequential', 'shuffled'];
// [key, label, kind, help]: kind int (whole numbers), size (int or "256K"), text
const IPERF = [
  ['udp_bitrate', 'UDP bitrate (-b)', 'text', '"0" is unlimited; "100M", "1.5G"'],
  ['bitrate', 'TCP bitrate (-b)', 'text', 'empty: unlimited'],
  ['parallel', 'streams (-P)', 'int', '1..128'],
  ['length', 'length (-l)', 'size', 'bytes or "128K"'],
  ['window', 'window (-w)', 'size', 'bytes or "4M"'],
  ['omit_s', 'omit (-O, s)', 'int', 'seconds not counted at the start'],
  ['congestion', 'congestion (-C)', 'text', '"cubic", "bbr", …'],
  ['tos', 'TOS (-S)', 'int', '0..255'],
  ['affinity', 'affinity (-A)', 'text', '"n" or "n,m"'],
];

export class SpecBuilder {
  #machines = [];            // GET /hosts machines
  #pairs = h('div', { class: 'b-pairs' });
  #combos = h('div', { class: 'b-combos' });
  #onChange;
  #f = {};                   // key -> input element(s)

  /** onChange() is called after the person changed the form. */
  constructor(onChange) {
    this.#onChange = onChange;
    const f = this.#f;
    f.name = h('input', { id: 'b-name', type: 'text', maxlength: 100, autocomplete: 'off', dataset: { field: 'name' } });
    f.protocols = PROTOCOLS.map((p) => h('input', { type: 'checkbox', value: p, id: `b-proto-${p}` }));
    f.directions = DIRECTIONS.map((d) => h('input', { type: 'checkbox', value: d, id: `b-dir-${d}` }));
    f.tool = TOOLS.map((t) => h('input', { type: 'checkbox', value: t, id: `b-tool-${t}` }));
    f.family = FAMILIES.map((a) => h('input', { type: 'checkbox', value: a, id: `b-family-${a}` }));
    f.duration_s = h('input', { id: 'b-duration', type: 'text', inputmode: 'numeric', dataset: { field: 'duration_s' } });
    f.repeats = h('input', { id: 'b-repeats', type: 'number', min: 1, max: 1000, dataset: { field: 'repeats' } });
    f.order = h('select', { id: 'b-order', dataset: { field: 'order' } }, ORDERS.map((o) => h('option', { value: o }, o)));
    f.pause_s = h('input', { id: 'b-pause', type: 'number', min: 0, step: 'any', dataset: { field: 'pause_s' } });
    f.concurrency = h('select', { id: 'b-concurrency', dataset: { field: 'concurrency' } },
      h('option', { value: 'disjoint' }, 'disjoint pairs at once'), h('option', { value: 'none' }, 'one run at a time'),
      h('option', { value: 'pairs' }, 'every pair at once (hosts shared)'));
    f.os_after = h('select', { id: 'b-os-after', dataset: { field: 'os_after' } },
      h('option', { value: 'restore' }, 'boot back to where they were'), h('option', { value: 'leave' }, 'leave them'));
    f.iperf = Object.fromEntries(IPERF.map(([key]) => [key, h('input', {
      id: `b-iperf-${key}`, type: 'text', autocomplete: 'off', spellcheck: 'false', dataset: { field: `iperf.${key}` },
    })]));
    f.zerocopy = h('input', { id: 'b-iperf-zerocopy', type: 'checkbox', dataset: { field: 'iperf.zerocopy' } });

    const label = (input, text, help) => h('div', { class: 'b-field' },
      h('label', { for: input.id }, text), input, help ? h('span', { class: 'help' }, help) : null,
      h('span', { class: 'b-error', role: 'alert', hidden: true }));
    const checks = (name, inputs, field) => h('fieldset', { class: 'b-checks', dataset: { field } },
      h('legend', {}, name),
      inputs.map((i) => h('label', { class: 'b-check' }, i, ` ${i.value}`)),
      h('span', { class: 'b-error', role: 'alert', hidden: true }));
    const addPair = h('button', { type: 'button', class: 'b-add-pair' }, 'Add a pair');
    addPair.addEventListener('click', () => { this.#addPair({}); this.#changed(); });
    const addCombo = h('button', { type: 'button', class: 'b-add-combo' }, 'Add an OS combination');
    addCombo.addEventListener('click', () => { this.#addCombo({}); this.#changed(); });

    this.el = h('form', { class: 'builder', 'aria-label': 'Matrix builder', novalidate: true },
      h('div', { class: 'b-row' }, label(f.name, 'Name')),
      h('fieldset', { class: 'b-group', dataset: { field: 'pairs' } }, h('legend', {}, 'Pairs (client → server, over a link)'),
        this.#pairs, addPair, h('span', { class: 'b-error', role: 'alert', hidden: true })),
      h('fieldset', { class: 'b-group', dataset: { field: 'os' } }, h('legend', {}, 'OS combinations'),
        h('p', { class: 'help' }, 'None: the hosts as they are. Each combination boots the hosts as it says (fewest boots first).'),
        this.#combos, addCombo, label(f.os_after, 'After the last combination'),
        h('span', { class: 'b-error', role: 'alert', hidden: true })),
      h('div', { class: 'b-row' },
        checks('Protocols', f.protocols, 'protocols'),
        checks('Directions', f.directions, 'directions'),
        checks('Tools', f.tool, 'tool'),
        checks('Address families', f.family, 'family')),
      h('div', { class: 'b-row' },
        label(f.duration_s, 'Duration (-t, s)', 'several: a sweep'),
        label(f.repeats, 'Repeats'),
        label(f.order, 'Order'),
        label(f.pause_s, 'Pause between runs (s)'),
        label(f.concurrency, 'Concurrency')),
      h('fieldset', { class: 'b-group b-iperf', dataset: { field: 'iperf' } },
        h('legend', {}, 'iperf3 parameters'),
        h('p', { class: 'help' }, 'Empty: iperf3\'s default. Several values separated by spaces sweep the parameter.'),
        h('div', { class: 'b-row' }, IPERF.map(([key, text, , help]) => label(f.iperf[key], text, help)),
          h('div', { class: 'b-field' }, h('label', { class: 'b-check' }, f.zerocopy, ' zero copy (-Z)'),
            h('span', { class: 'b-error', role: 'alert', hidden: true })))));
    this.el.addEventListener('input', () => this.#changed());
    this.el.addEventListener('change', () => this.#changed());
    this.el.addEventListener('submit', (e) => e.preventDefault());
  }

  /** The inventory's machines (GET /hosts), for the pair and OS choices. */
  setMachines(machines) {
    this.#machines = machines;
  }

  /** Fill the form from spec (an object). */
  set(spec) {
    const f = this.#f;
    f.name.value = spec.name ?? '';
    replace(this.#pairs);
    for (const p of spec.pairs ?? []) this.#addPair(p);
    replace(this.#combos);
    for (const c of spec.os ?? []) this.#addCombo(c);
    f.os_after.value = spec.os_after ?? 'restore';
    const protos = spec.protocols ?? ['tcp'];
    for (const i of f.protocols) i.checked = protos.includes(i.value);
    const dirs = spec.directions ?? ['forward'];
    for (const i of f.directions) i.checked = dirs.includes(i.value);
    const tools = [spec.tool ?? 'iperf3'].flat();
    for (const i of f.tool) i.checked = tools.includes(i.value);
    const families = [spec.family ?? 'ipv4'].flat();
    for (const i of f.family) i.checked = families.includes(i.value);
    f.duration_s.value = listText(spec.duration_s);
    f.repeats.value = spec.repeats ?? '';
    f.order.value = spec.order ?? 'interleaved';
    f.pause_s.value = spec.pause_s ?? '';
    f.concurrency.value = spec.concurrency ?? 'disjoint';
    const ip = spec.iperf ?? {};
    for (const [key] of IPERF) f.iperf[key].value = listText(ip[key]);
    f.zerocopy.checked = ip.zerocopy === true;
  }

  /** base (a spec object) with the form's keys written into a copy of it. */
  read(base) {
    const f = this.#f;
    const s = structuredClone(base ?? {});
    const put = (obj, key, value) => { if (value === undefined) delete obj[key]; else obj[key] = value; };
    put(s, 'name', f.name.value.trim() || undefined);
    s.pairs = [...this.#pairs.children].map((row) => {
      const [client, server, link] = row.querySelectorAll('select');
      return { client: client.value, server: server.value, ...(link.value ? { link: link.value } : {}) };
    });
    const combos = [...this.#combos.children].map((row) => Object.fromEntries([...row.querySelectorAll('select')]
      .filter((sel) => sel.value).map((sel) => [sel.dataset.machine, sel.value])));
    put(s, 'os', combos.length ? combos : undefined);
    put(s, 'os_after', combos.length && f.os_after.value !== 'restore' ? f.os_after.value : undefined);
    s.protocols = f.protocols.filter((i) => i.checked).map((i) => i.value);
    s.directions = f.directions.filter((i) => i.checked).map((i) => i.value);
    const tools = f.tool.filter((i) => i.checked).map((i) => i.value);
    put(s, 'tool', tools.length === 0 || (tools.length === 1 && tools[0] === 'iperf3') ? undefined
      : tools.length === 1 ? tools[0] : tools);
    const fams = f.family.filter((i) => i.checked).map((i) => i.value);
    put(s, 'family', fams.length === 0 || (fams.length === 1 && fams[0] === 'ipv4') ? undefined
      : fams.length === 1 ? fams[0] : fams);
    put(s, 'duration_s', parseList(f.duration_s.value, 'int'));
    put(s, 'repeats', f.repeats.value === '' ? undefined : Number(f.repeats.value));
    put(s, 'order', f.order.value);
    put(s, 'pause_s', f.pause_s.value === '' ? undefined : Number(f.pause_s.value));
    put(s, 'concurrency', f.concurrency.value === 'disjoint' ? undefined : f.concurrency.value);
    const ip = { ...(s.iperf ?? {}) };
    for (const [key, , kind] of IPERF) put(ip, key, parseList(f.iperf[key].value, kind));
    put(ip, 'zerocopy', f.zerocopy.checked ? true : undefined);
    put(s, 'iperf', Object.keys(ip).length ? ip : undefined);
    return s;
  }

  /** Show the API's error (field, message) at the form field that holds it; false when none does. */
  fieldError(field, message) {
    this.clearErrors();
    if (!field) return false;
    // "iperf.parallel[1]" -> "iperf.parallel"; "pairs[0].server" is a select of row 0
    const pair = /^pairs\[(\d+)\](?:\.(client|server|link))?/.exec(field);
    const combo = /^os\[(\d+)\](?:\.([^.[\]]+))?/.exec(field);
    let target = null;
    if (pair) {
      const row = this.#pairs.children[Number(pair[1])];
      target = row?.querySelector(`select[data-part="${pair[2] ?? 'client'}"]`) ?? row;
    } else if (combo) {
      const row = this.#combos.children[Number(combo[1])];
      target = (combo[2] && row?.querySelector(`select[data-machine="${CSS.escape(combo[2])}"]`)) ?? row;
    }
    for (let key = field; !target;) {
      target = this.el.querySelector(`[data-field="${CSS.escape(key)}"]`);
      const up = key.replace(/(\[\d+\]|\.[^.[\]]*)$/, '');
      if (up === key) break;
      key = up;
    }
    if (!target) return false;
    const holder = target.closest('.b-field, .b-checks, .b-group, .b-pair, .b-combo') ?? target;
    const box = holder.querySelector(':scope > .b-error') ?? holder.appendChild(h('span', { class: 'b-error', role: 'alert' }));
    box.textContent = message;
    box.hidden = false;
    holder.classList.add('b-invalid');
    const input = target.matches('input, select') ? target : holder.querySelector('input, select');
    input?.setAttribute('aria-invalid', 'true');
    input?.focus();
    return true;
  }

  clearErrors() {
    for (const e of this.el.querySelectorAll('.b-error')) e.hidden = true;
    for (const e of this.el.querySelectorAll('.b-invalid')) e.classList.remove('b-invalid');
    for (const e of this.el.querySelectorAll('[aria-invalid]')) e.removeAttribute('aria-invalid');
  }

  #changed() {
    this.#onChange?.();
  }

  #addPair(p) {
    const n = this.#pairs.children.length;
    const names = this.#machines.map((m) => m.name);
    const pick = (part, value) => {
      const sel = h('select', { 'aria-label': `pair ${n + 1} ${part}`, dataset: { part } },
        names.map((x) => h('option', { value: x }, x)));
      if (value && !names.includes(value)) sel.append(h('option', { value }, `${value} (not in the inventory)`));
      sel.value = value ?? names[part === 'client' ? 0 : Math.min(1, names.length - 1)] ?? '';
      return sel;
    };
    const client = pick('client', p.client);
    const server = pick('server', p.server);
    const link = h('select', { 'aria-label': `pair ${n + 1} link`, dataset: { part: 'link' } });
    const links = () => {
      const m = this.#machines.find((x) => x.name === server.value);
      const keep = link.value || p.link || '';
      replace(link, h('option', { value: '' }, 'first shared link'),
        Object.entries(m?.links ?? {}).map(([name, l]) => h('option', { value: name }, `${name} (${l.address})`)));
      if (keep && ![...link.options].some((o) => o.value === keep)) link.append(h('option', { value: keep }, keep));
      link.value = keep;
    };
    links();
    server.addEventListener('change', () => { link.value = ''; links(); });
    const remove = h('button', { type: 'button', class: 'link-quiet b-remove', 'aria-label': `Remove pair ${n + 1}` }, 'Remove');
    const row = h('div', { class: 'b-pair', dataset: { pair: String(n) } }, client, h('span', { 'aria-hidden': 'true' }, ' → '),
      server, link, remove, h('span', { class: 'b-error', role: 'alert', hidden: true }));
    remove.addEventListener('click', () => { row.remove(); this.#renumber(); this.#changed(); });
    this.#pairs.append(row);
    client.addEventListener('change', () => this.#refreshCombos());
    server.addEventListener('change', () => this.#refreshCombos());
  }

  /** The machines of the pairs, in order, once each. */
  #pairMachines() {
    const out = [];
    for (const row of this.#pairs.children) {
      for (const sel of row.querySelectorAll('select[data-part="client"], select[data-part="server"]')) {
        if (sel.value && !out.includes(sel.value)) out.push(sel.value);
      }
    }
    return out;
  }

  #addCombo(c) {
    const n = this.#combos.children.length;
    const row = h('div', { class: 'b-combo', dataset: { combo: String(n) } });
    row.dataset.value = JSON.stringify(c);
    this.#combos.append(row);
    this.#drawCombo(row);
  }

  #drawCombo(row) {
    const c = JSON.parse(row.dataset.value || '{}');
    const n = [...this.#combos.children].indexOf(row);
    const machines = [...new Set([...this.#pairMachines(), ...Object.keys(c)])];
    const remove = h('button', { type: 'button', class: 'link-quiet b-remove', 'aria-label': `Remove OS combination ${n + 1}` }, 'Remove');
    remove.addEventListener('click', () => { row.remove(); this.#renumber(); this.#changed(); });
    replace(row, machines.map((name) => {
      const m = this.#machines.find((x) => x.name === name);
      const sel = h('select', { 'aria-label': `combination ${n + 1}: ${name}`, dataset: { machine: name } },
        h('option', { value: '' }, 'as it is'), Object.keys(m?.os ?? {}).map((os) => h('option', { value: os }, os)));
      if (c[name] && ![...sel.options].some((o) => o.value === c[name])) sel.append(h('option', { value: c[name] }, c[name]));
      sel.value = c[name] ?? '';
      sel.addEventListener('change', () => {
        const now = JSON.parse(row.dataset.value || '{}');
        if (sel.value) now[name] = sel.value; else delete now[name];
        row.dataset.value = JSON.stringify(now);
      });
      return h('label', { class: 'b-combo-host' }, `${name} `, sel);
    }), remove, h('span', { class: 'b-error', role: 'alert', hidden: true }));
  }

  #refreshCombos() {
    for (const row of this.#combos.children) this.#drawCombo(row);
  }

  #renumber() {
    [...this.#pairs.children].forEach((row, i) => { row.dataset.pair = String(i); });
    [...this.#combos.children].forEach((row, i) => { row.dataset.combo = String(i); });
  }
}

/** A spec value as the form shows it: a list as values separated by spaces. */
function listText(v) {
  if (v === undefined || v === null) return '';
  return Array.isArray(v) ? v.map(String).join(' ') : String(v);
}

/** A field's text as a spec value: undefined (empty), one value, or a list (a sweep). */
function parseList(text, kind) {
  const parts = text.trim().split(/\s+/).filter(Boolean);
  if (parts.length === 0) return undefined;
  const value = (x) => {
    if (kind === 'int' && /^-?\d+$/.test(x)) return Number(x);
    if (kind === 'size' && /^\d+$/.test(x)) return Number(x);
    return x;
  };
  const list = parts.map(value);
  return list.length === 1 ? list[0] : list;
}
