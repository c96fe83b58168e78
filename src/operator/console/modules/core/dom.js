// @ts-check
/* global document, HTMLElement */
// The console's pages are built here, element by element: the pages allow no inline script or
// style, and every text from the admin API goes into the page as text (textContent, text nodes),
// never as markup.

import { LoggedOut, messageOf } from './admin-client.js';

/**
 * What renders a page of the console into its `main`.
 * @typedef {(main: HTMLElement) => Promise<void>} Renderer
 */

/**
 * The page's element of that id and type: the shells (console-pages.ts) always have it.
 * @template {HTMLElement} E
 * @param {string} id
 * @param {new () => E} type
 * @returns {E}
 */
export function byId(id, type) {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`the page has no #${id}`);
  return found;
}

/** @typedef {Node | string | number | false | null | undefined} Child */

/**
 * An element with attributes and children. Children are nodes or text (strings and numbers become
 * text nodes); attribute values are set as text. Nothing is parsed as HTML.
 * @template {keyof HTMLElementTagNameMap} Tag
 * @param {Tag} tag
 * @param {Readonly<Record<string, string | number | boolean | null | undefined>>} [attributes]
 * @param {...(Child | readonly Child[])} children
 * @returns {HTMLElementTagNameMap[Tag]}
 */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'object' ? child : String(child));
  }
  return node;
}

/**
 * @param {string} text
 * @param {string} [kind]
 */
export function badge(text, kind) {
  return el('span', { class: kind ? `badge ${kind}` : 'badge' }, text);
}

/**
 * @param {readonly (string | { text: string, class: string })[]} headings
 * @param {readonly Node[]} rows
 * @param {string} emptyText
 */
export function table(headings, rows, emptyText) {
  if (rows.length === 0) return el('p', { class: 'empty' }, emptyText);
  const head = el(
    'tr',
    {},
    headings.map((heading) =>
      typeof heading === 'string' ? el('th', {}, heading) : el('th', { class: heading.class }, heading.text),
    ),
  );
  return el('table', {}, el('thead', {}, head), el('tbody', {}, rows));
}

/** @param {readonly { label: string, value: string, kind?: string | undefined, name?: string }[]} items */
export function statList(items) {
  return el(
    'dl',
    { class: 'stats' },
    items.map(({ label, value, kind, name }) =>
      el('div', { class: 'stat' }, el('dt', {}, label), el('dd', { class: kind, 'data-stat': name }, value)),
    ),
  );
}

/**
 * @param {string} title
 * @param {...(Child | readonly Child[])} children
 */
export function panel(title, ...children) {
  return el('section', { class: 'panel' }, el('h2', {}, title), ...children);
}

/**
 * What a panel draws from its answer: nodes, or arrays of them two deep, nulls left out.
 * @typedef {Node | null | readonly (Node | null | readonly (Node | null)[])[]} Drawn
 */

/**
 * A panel whose content comes from a promise, drawn by `render`; an error, the API's or the
 * drawing's, is shown in place of the content.
 * @template T
 * @param {string} title
 * @param {Promise<T>} promise
 * @param {(value: T) => Drawn} render
 */
export function loadingPanel(title, promise, render) {
  const body = el('div', {}, el('p', { class: 'loading' }, 'Loading…'));
  promise
    .then((value) => body.replaceChildren(...[render(value)].flat(2).filter((node) => node !== null)))
    .catch((/** @type {unknown} */ error) => {
      if (!(error instanceof LoggedOut)) body.replaceChildren(el('p', { class: 'error' }, messageOf(error)));
    });
  return panel(title, body);
}

/**
 * @param {string} text
 * @param {boolean} [isError]
 */
export function notify(text, isError = false) {
  const notice = byId('notice', HTMLElement);
  notice.textContent = text;
  notice.classList.toggle('error', isError);
  notice.hidden = false;
}

/**
 * A labelled field.
 * @param {string} label
 * @param {HTMLElement} input
 */
export function field(label, input) {
  return el('label', { class: 'field' }, el('span', {}, label), input);
}
