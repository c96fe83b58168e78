// @ts-check
// What the console's forms and buttons do while the admin API answers, and with its refusals.

import { LoggedOut, messageOf } from './admin-client.js';
import { el, notify } from './dom.js';

/**
 * Runs `action` when the form is submitted (the browser having checked its fields), its buttons
 * disabled meanwhile; what went wrong is shown in the form.
 * @param {HTMLFormElement} form
 * @param {() => Promise<void>} action
 */
export function onSubmit(form, action) {
  const problem = el('p', { class: 'error', role: 'alert', hidden: true });
  form.append(problem);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const buttons = [...form.querySelectorAll('button')];
    problem.hidden = true;
    buttons.forEach((button) => (button.disabled = true));
    action()
      .catch((/** @type {unknown} */ error) => {
        if (error instanceof LoggedOut) return;
        problem.textContent = messageOf(error);
        problem.hidden = false;
      })
      .finally(() => buttons.forEach((button) => (button.disabled = false)));
  });
}

/**
 * What a button that POSTs to the admin API does once confirmed: the button disabled meanwhile, the
 * outcome in the notice, the page drawn again on success.
 * @param {HTMLButtonElement} button
 * @param {string} label what is being done, for the notice of a failure
 * @param {() => Promise<unknown>} post the call of the admin API
 * @param {string} done the notice of a success
 * @param {() => Promise<void>} reload
 */
export function postAction(button, label, post, done, reload) {
  return async () => {
    button.disabled = true;
    try {
      await post();
      notify(done);
      await reload();
    } catch (error) {
      button.disabled = false;
      if (!(error instanceof LoggedOut)) notify(`${label} failed: ${messageOf(error)}`, true);
    }
  };
}
