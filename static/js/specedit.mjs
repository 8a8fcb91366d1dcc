// specedit.mjs - the spec as JSON on "New matrix": the textarea, its help
// and its error, kept in step with the builder's form (builder.mjs) both
// ways, and kept in sessionStorage as a draft, so it survives going to a
// matrix and back.  An error the API gives for a field is also shown at the
// form's field.

import { h, replace } from './dom.mjs';
import { specText } from './format.mjs';

export const DRAFT_KEY = 'testbedd.matrix-spec';

export class SpecEditor {
  #builder;
  #onChange;
  #textarea = h('textarea', {
    id: 'spec', class: 'spec mono', rows: 14, spellcheck: 'false', autocapitalize: 'off', autocomplete: 'off',
    'aria-describedby': 'spec-help spec-error',
  });
  #error = h('div', { id: 'spec-error', class: 'spec-error', role: 'alert', hidden: true });

  /**
   * The editor beside builder (a SpecBuilder).  onChange() after the spec
   * changed (by typing or from the form); onSubmit() on Ctrl+Enter.
   */
  constructor(builder, { onChange, onSubmit }) {
    this.#builder = builder;
    this.#onChange = onChange;
    const textarea = this.#textarea;
    this.nodes = [
      h('label', { for: 'spec', class: 'spec-label' }, 'Spec (JSON): the same as the form; edit either'),
      h('p', { id: 'spec-help', class: 'help' },
        'Pairs, protocols, directions, duration_s, repeats, order and iperf options; a list sweeps a value; ',
        'keys the form does not show (caps, groups, seed) are kept. ',
        'Plan shows the runs it stands for without running anything (Ctrl+Enter). ',
        'The format: ', h('code', {}, 'MatrixSpec'), ' in ', h('code', {}, 'api/openapi.yaml'), '.'),
      textarea,
      this.#error,
    ];
    textarea.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        onSubmit();
      }
    });
    textarea.addEventListener('input', () => {
      this.save();
      this.toForm();
    });
  }

  get text() { return this.#textarea.value; }
  set text(value) { this.#textarea.value = value; }

  /** The spec has its first value (the tests wait for it). */
  markReady() { this.#textarea.dataset.ready = 'yes'; }
  focus() { this.#textarea.focus(); }

  /** Keep the spec as the draft. */
  save() {
    sessionStorage.setItem(DRAFT_KEY, this.#textarea.value);
    this.#onChange();
  }

  /** The form changed: its keys into the JSON, keeping the keys it does not show. */
  fromForm() {
    let base = {};
    try {
      const v = JSON.parse(this.#textarea.value);
      if (v && typeof v === 'object' && !Array.isArray(v)) base = v;
    } catch { /* the JSON was broken: the form's keys start it again */ }
    this.#textarea.value = specText(this.#builder.read(base));
    this.save();
    this.#builder.clearErrors();
    this.clearError();
  }

  /** The JSON into the form, when it is a spec object. */
  toForm() {
    try {
      const v = JSON.parse(this.#textarea.value);
      if (v && typeof v === 'object' && !Array.isArray(v)) this.#builder.set(v);
    } catch { /* the person is typing: the form waits for JSON */ }
  }

  /** The spec, or null (with the error shown) when it is not a JSON object. */
  read() {
    let value;
    try {
      value = JSON.parse(this.#textarea.value);
    } catch (err) {
      this.showError(`The spec is not JSON: ${err.message}`);
      return null;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      this.showError('The spec is a JSON object: {"name": …, "pairs": […], …}');
      return null;
    }
    return value;
  }

  /** Show message (about field, when given: also at the form's field). */
  showError(message, field) {
    // testbedd's messages start with the field they name: it is shown once, apart.
    const text = field && message.startsWith(`${field}: `) ? message.slice(field.length + 2) : message;
    replace(this.#error,
      field ? [h('code', { class: 'field' }, field), ' '] : null,
      h('span', { class: 'message' }, text));
    this.#error.hidden = false;
    this.#textarea.setAttribute('aria-invalid', 'true');
    if (field) this.#builder.fieldError(field, text);
  }

  clearError() {
    this.#error.hidden = true;
    this.#textarea.removeAttribute('aria-invalid');
    this.#builder.clearErrors();
  }
}
