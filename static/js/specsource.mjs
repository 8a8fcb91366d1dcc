// specsource.mjs - where the spec on "New matrix" comes from: the draft of
// this tab, else deploy/examples/baseline.json with this inventory's first
// two machines of role host; "Load a spec" takes the example or an earlier
// matrix's spec (to edit and run again), "Restore the example" the example.

import { api } from './api.mjs';
import { announce, h } from './dom.mjs';
import { specText } from './format.mjs';
import { DRAFT_KEY } from './specedit.mjs';

// deploy/examples/baseline.json (the browser test checks that they agree);
// the pair is replaced by the first two machines of role host.
const BASELINE = {
  name: 'baseline',
  pairs: [{ client: 'left', server: 'right' }],
  protocols: ['tcp', 'udp'],
  directions: ['forward', 'reverse'],
  duration_s: 10,
  repeats: 3,
  order: 'interleaved',
  iperf: { udp_bitrate: '0' },
};

export class SpecSource {
  #editor;
  #select = h('select', { id: 'spec-from', class: 'spec-from' },
    h('option', { value: '' }, 'Start from…'), h('option', { value: 'example' }, 'the baseline example'));

  /** The sources for editor (a SpecEditor): row (the top of the page) and example (a button). */
  constructor(editor) {
    this.#editor = editor;
    this.row = h('div', { class: 'spec-from-row' }, h('label', { for: 'spec-from' }, 'Load a spec: '), this.#select,
      h('span', { class: 'help' }, ' the example, or an earlier matrix\'s spec to edit and run again'));
    this.example = h('button', { type: 'button', class: 'example', title: 'Replace the spec with the baseline example' },
      'Restore the example');
    this.example.addEventListener('click', async () => {
      sessionStorage.removeItem(DRAFT_KEY);
      editor.text = await exampleSpec();
      editor.toForm();
      editor.clearError();
      editor.focus();
    });
    this.#select.addEventListener('change', () => this.#loadFrom());
  }

  /** The first spec: the draft, else the example. */
  start() {
    const editor = this.#editor;
    const draft = sessionStorage.getItem(DRAFT_KEY);
    if (draft !== null) {
      editor.text = draft;
      editor.markReady();
      return;
    }
    editor.text = specText(BASELINE);
    exampleSpec().then((text) => {
      if (sessionStorage.getItem(DRAFT_KEY) === null) editor.text = text;
      editor.markReady();
    });
  }

  /** Offer matrices (GET /matrices entries) to load a spec from. */
  offer(matrices) {
    for (const m of matrices) this.#select.append(h('option', { value: String(m.id) }, `matrix #${m.id} ${m.name} (${m.state})`));
  }

  async #loadFrom() {
    const editor = this.#editor;
    const from = this.#select.value;
    this.#select.value = '';
    if (!from) return;
    try {
      editor.text = from === 'example' ? await exampleSpec() : specText(stripPlanned((await api('GET', `matrices/${from}?runs=0`)).matrix.spec));
    } catch (err) {
      if (err.status !== 401) editor.showError(`Could not load the spec of matrix ${from}: ${err.message}`);
      return;
    }
    editor.save();
    editor.toForm();
    editor.clearError();
    announce(from === 'example' ? 'The baseline example is loaded' : `The spec of matrix ${from} is loaded`);
  }
}

/**
 * A stored spec (defaults filled, groups expanded to pairs) as a spec to
 * edit: the groups go, since their pairs are listed.
 */
function stripPlanned(spec) {
  const s = structuredClone(spec);
  if (s.groups && s.pairs) delete s.groups;
  return s;
}

/** The baseline example with its pair made of this inventory's first two machines of role host. */
async function exampleSpec() {
  const spec = structuredClone(BASELINE);
  try {
    const hosts = (await api('GET', 'hosts')).hosts.filter((m) => m.role === 'host').map((m) => m.name);
    if (hosts.length) spec.pairs = [{ client: hosts[0], server: hosts[1] ?? hosts[0] }];
  } catch (err) {
    console.warn('testbedd: the machines for the example spec:', err.message);
  }
  return specText(spec);
}
