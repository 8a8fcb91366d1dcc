// matrixactions.mjs - Cancel / Resume / Rerun on a matrix page: the buttons
// the matrix's state allows (disabled, with the reason, for a viewer), the
// POST each one makes and its error.  A rerun opens the new matrix; cancel
// and resume tell the page (onCancel(matrix), onResume()).

import { api } from './api.mjs';
import { announce, h } from './dom.mjs';
import { errorText, MATRIX_ENDED, operatorOnly } from './format.mjs';

export class MatrixActions {
  #id;
  #canOperate;
  #msg = h('p', { class: 'alert', role: 'alert', hidden: true });
  #cancel;
  #resume;
  #rerun;

  /** The buttons for matrix id. */
  constructor(ctx, id, { onCancel, onResume }) {
    this.#id = id;
    const canOperate = ctx.canOperate();
    this.#canOperate = canOperate;
    const button = (label, cls, what) => h('button', {
      type: 'button', class: cls, hidden: true, disabled: !canOperate, title: canOperate ? null : operatorOnly(ctx, what),
    }, label);
    this.#cancel = button('Cancel', 'danger mx-cancel', 'Canceling a matrix');
    this.#resume = button('Resume', 'primary mx-resume', 'Resuming a matrix');
    this.#rerun = button('Rerun', 'mx-rerun', 'Rerunning a matrix');
    this.#cancel.addEventListener('click', () => this.#act(this.#cancel, 'cancel', (reply) => {
      announce(`Matrix ${id}: cancel requested`);
      onCancel(reply.matrix);
    }));
    this.#resume.addEventListener('click', () => this.#act(this.#resume, 'resume', () => {
      announce(`Matrix ${id} resumed`);
      onResume();
    }));
    this.#rerun.addEventListener('click', () => this.#act(this.#rerun, 'rerun', (reply) => {
      announce(`Matrix ${reply.matrix.id} started: a rerun of ${id}`);
      location.hash = `#/matrices/${reply.matrix.id}`;
    }));
    this.nodes = [
      h('div', { class: 'mx-buttons' }, this.#cancel, this.#resume, this.#rerun),
      canOperate ? null : h('p', { class: 'help' }, `${operatorOnly(ctx, 'Canceling, resuming or rerunning a matrix')}.`),
      this.#msg,
    ];
  }

  /** Show the buttons matrix m's state allows. */
  draw(m) {
    const focused = document.activeElement;
    this.#cancel.hidden = !(m.state === 'queued' || m.state === 'running');
    this.#resume.hidden = !(m.state === 'canceled' || m.state === 'interrupted');
    this.#rerun.hidden = !MATRIX_ENDED.has(m.state);
    // The button that had the focus went away: keep the focus on the page.
    if (focused instanceof HTMLButtonElement && focused.hidden) {
      [this.#cancel, this.#resume, this.#rerun].find((b) => !b.hidden)?.focus();
    }
  }

  async #act(b, path, done) {
    this.#msg.hidden = true;
    b.disabled = true;
    b.setAttribute('aria-busy', 'true');
    try {
      done(await api('POST', `matrices/${this.#id}/${path}`));
    } catch (err) {
      if (err.status === 401) return;
      this.#msg.textContent = errorText(err, `Not done (${path})`);
      this.#msg.hidden = false;
    } finally {
      b.disabled = !this.#canOperate;
      b.removeAttribute('aria-busy');
    }
  }
}
