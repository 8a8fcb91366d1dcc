// specactions.mjs - Plan and Start on "New matrix": Plan asks the plan view
// (planview.mjs) to plan the spec (POST /api/v1/matrices/plan: no side
// effects, so a viewer may), Start starts it (POST /api/v1/matrices:
// operators and admins) and opens the new matrix.  While one of them waits,
// both are disabled; an error goes to the editor (specedit.mjs).

import { api } from './api.mjs';
import { announce, h } from './dom.mjs';
import { errorText, operatorOnly } from './format.mjs';

export class SpecActions {
  #editor;
  #canStart;
  #generation = 0;         // an answer of an older generation is dropped
  plan = h('button', { type: 'button', class: 'plan' }, 'Plan');
  start;

  /** The buttons for editor (a SpecEditor) and planView (a PlanView); note: the line for a viewer, or null. */
  constructor(ctx, editor, planView) {
    this.#editor = editor;
    const canStart = ctx.canOperate();
    this.#canStart = canStart;
    this.start = h('button', {
      type: 'button', class: 'primary start', disabled: !canStart,
      title: canStart ? null : operatorOnly(ctx, 'Starting a matrix'),
    }, 'Start');
    this.note = canStart ? null : h('p', { class: 'help' }, `${operatorOnly(ctx, 'Starting a matrix')}; you can plan one.`);
    this.plan.addEventListener('click', () => this.#busy(this.plan, (s, current) => planView.plan(s, current)));
    this.start.addEventListener('click', () => this.#busy(this.start, async (s) => {
      const reply = await api('POST', 'matrices', s);
      announce(`Matrix ${reply.matrix.id} started`);
      location.hash = `#/matrices/${reply.matrix.id}`;
    }));
  }

  /** Drop the answers still awaited (the page goes). */
  stop() { this.#generation += 1; }

  /** fn(spec, current) with both buttons disabled; current() is false once a newer click or stop() came. */
  async #busy(button, fn) {
    const mine = ++this.#generation;
    const editor = this.#editor;
    editor.clearError();
    const s = editor.read();
    if (s === null) return;
    this.plan.disabled = true;
    this.start.disabled = true;
    button.setAttribute('aria-busy', 'true');
    try {
      await fn(s, () => mine === this.#generation);
    } catch (err) {
      if (mine !== this.#generation || err.status === 401) return;
      editor.showError(err.status === 400 ? err.message : errorText(err, button === this.start ? 'Not started' : 'Not planned'),
        err.field);
    } finally {
      if (mine === this.#generation) {
        this.plan.disabled = false;
        this.start.disabled = !this.#canStart;
        button.removeAttribute('aria-busy');
      }
    }
  }
}
