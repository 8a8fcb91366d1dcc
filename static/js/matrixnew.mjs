// matrixnew.mjs - "New matrix" (#/matrices/new): the page that composes the
// spec's parts, top to bottom: where it comes from (specsource.mjs), the
// builder's form (builder.mjs) and the same spec as JSON (specedit.mjs), the
// two kept in step, Plan and Start (specactions.mjs) and the plan
// (planview.mjs).  The spec being edited is kept in sessionStorage, so it
// survives going to a matrix and back.

import { api } from './api.mjs';
import { SpecBuilder } from './builder.mjs';
import { h, replace } from './dom.mjs';
import { PlanView } from './planview.mjs';
import { SpecActions } from './specactions.mjs';
import { SpecEditor } from './specedit.mjs';
import { SpecSource } from './specsource.mjs';

/** Show "New matrix" in main; returns the function that stops the page. */
export function renderNew(main, ctx) {
  const page = new NewMatrixPage(main, ctx);
  return () => page.stop();
}

class NewMatrixPage {
  #plan = new PlanView();
  #builder;
  #editor;
  #source;
  #actions;

  constructor(main, ctx) {
    document.title = 'New matrix · testbedd';
    // the form changed: its keys into the JSON, keeping the keys it does not show
    this.#builder = new SpecBuilder(() => this.#editor.fromForm());
    this.#editor = new SpecEditor(this.#builder, {
      onChange: () => this.#plan.markStale(),
      onSubmit: () => this.#actions.plan.click(),
    });
    this.#source = new SpecSource(this.#editor);
    this.#actions = new SpecActions(ctx, this.#editor, this.#plan);
    replace(main,
      h('div', { class: 'page-head' },
        h('h1', {}, 'New matrix'),
        h('a', { href: '#/matrices' }, 'All matrices')),
      this.#source.row,
      this.#builder.el,
      h('div', { class: 'spec-form' },
        this.#editor.nodes,
        h('div', { class: 'spec-buttons' }, this.#actions.plan, this.#actions.start, this.#source.example),
        this.#actions.note),
      this.#plan.el);
    this.#loadChoices();
    this.#source.start();
  }

  stop() { this.#actions.stop(); }

  /** The machines for the form's choices, and earlier matrices to load a spec from. */
  #loadChoices() {
    Promise.all([api('GET', 'hosts').catch(() => ({ hosts: [] })), api('GET', 'matrices?limit=30').catch(() => ({ matrices: [] }))])
      .then(([{ hosts }, { matrices }]) => {
        this.#builder.setMachines(hosts);
        this.#source.offer(matrices);
        this.#editor.toForm();
        this.#builder.el.dataset.ready = 'yes';
      });
  }
}
