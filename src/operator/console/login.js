// @ts-check
/* global document, fetch, location, URL, URLSearchParams */
/* global HTMLElement, HTMLFormElement, HTMLInputElement, HTMLButtonElement */
// The console's login page (served as is by src/operator/console/console-routes.ts): sends the
// operator token to the admin API, which starts a session and answers with its id in an HttpOnly
// cookie; the script never keeps either.
'use strict';

/** @import { AdminError } from '../admin/admin-schemas.ts' */

/**
 * The element the login page (console-pages.ts) always has, of that type.
 * @template {HTMLElement} E
 * @param {Element | null} found
 * @param {new () => E} type
 * @returns {E}
 */
function expect(found, type) {
  if (!(found instanceof type)) throw new Error(`the login page has no ${type.name}`);
  return found;
}

const form = expect(document.getElementById('login'), HTMLFormElement);
const input = expect(document.getElementById('token'), HTMLInputElement);
const problem = expect(document.getElementById('login-error'), HTMLElement);
const submit = expect(form.querySelector('button[type=submit]'), HTMLButtonElement);

/**
 * Where to go once logged in: the console page the browser was sent here from (`?next=`), when it is
 * one of this console's pages, else the overview. Never another site, nor this page again.
 * @returns {string}
 */
function destination() {
  const next = new URLSearchParams(location.search).get('next');
  if (next === null || !/^\/console(?:[/?#]|$)/.test(next) || next.startsWith('/console/login')) return '/console';
  return new URL(next, location.href).origin === location.origin ? next : '/console';
}

/** @param {string} text */
function showProblem(text) {
  problem.textContent = text;
  problem.hidden = false;
}

/**
 * @param {string} token
 * @returns {Promise<string | undefined>} what went wrong, if something did
 */
async function logIn(token) {
  const response = await fetch('/admin/v1/session', {
    method: 'POST',
    credentials: 'same-origin',
    // Sends the page's origin with the POST, which the page's policy (no-referrer) would send as `null`.
    referrerPolicy: 'same-origin',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ token }),
  });
  // Read to its end before the page moves on, so that the navigation does not cut the request short.
  const text = await response.text();
  if (response.ok) return undefined;
  if (response.status === 401)
    return 'That token is not valid: check it, or create one with petstore operator token create.';
  let message = `The server answered ${response.status}.`;
  try {
    const body = /** @type {Partial<AdminError> | null} */ (JSON.parse(text));
    if (typeof body?.message === 'string') message = body.message;
  } catch {
    // No JSON body: the status says enough.
  }
  return message;
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  problem.hidden = true;
  submit.disabled = true;
  logIn(input.value.trim())
    .then((failure) => {
      if (failure === undefined) location.assign(destination());
      else showProblem(failure);
    })
    .catch(() => showProblem('The server could not be reached.'))
    .finally(() => {
      submit.disabled = false;
    });
});
input.focus();
