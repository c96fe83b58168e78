// @ts-check
/* global SwaggerUIBundle, URL, document, HTMLScriptElement */
// Starts the API reference page (served by src/http/docs-page.ts). A plain script, loaded after the
// swagger-ui bundle; the page's Content-Security-Policy allows no inline script, so all set-up is here.
'use strict';

/**
 * What these plugins use of swagger-ui, which has no types of its own: a wrapper of a component gets
 * the original and the system, whose React draws.
 * @typedef {object} System
 * @property {{ createElement: (type: unknown, props: object | null, ...children: unknown[]) => unknown }} React
 */
/**
 * @template Props
 * @typedef {(Original: unknown, system: System) => (props: Props) => unknown} Wrapper
 */
/**
 * An Immutable.js Map, as swagger-ui keeps a parameter and its schema.
 * @typedef {object} ImmutableMap
 * @property {(key: string) => unknown} get
 * @property {(key: string) => ImmutableMap} delete
 * @property {(key: string, value: unknown) => ImmutableMap} set
 */
/** @typedef {{ parameterWithMetaByIdentity: (...args: unknown[]) => unknown }} SpecSelectors */
/** @typedef {{ $ref?: unknown, $$ref?: unknown, type?: unknown, items?: unknown }} SchemaFields */
/** @typedef {{ schema: unknown, isCircular?: boolean }} KeywordTypeProps */
/**
 * @typedef {object} ResponseBodyProps
 * @property {unknown} content
 * @property {string} [contentType]
 * @property {(name: string, container: boolean) => unknown} getComponent
 */

// The page is reachable as /docs, /docs/ and /docs/static/index.html: the document is found from
// this script's own address, which is the same for all three. It is the document's public address,
// which the page shows as its link under the title; relative, so a path prefix added by a proxy holds.
if (!(document.currentScript instanceof HTMLScriptElement)) throw new Error('not run as a classic script');
const SPEC_URL = new URL('../../v1/openapi.json', document.currentScript.src).href;

/**
 * "Try it out" sends only what the user chose. swagger-ui fills each parameter from its example,
 * its default or (when required) its first allowed value, and has no setting to stop it; it reads
 * them for that through `parameterWithMetaByIdentity`, while the row shows them from its `param`
 * prop. So the row gets a selector without them: the example and default stay on the page as text,
 * and an empty field means "not sent", which for `limit` means its default anyway.
 * @returns {{ wrapComponents: { parameterRow: Wrapper<{ specSelectors: SpecSelectors }> } }}
 */
function NoPrefillPlugin() {
  return {
    wrapComponents: {
      parameterRow: (Original, system) => (props) =>
        system.React.createElement(Original, { ...props, specSelectors: withoutSuggestedValues(props.specSelectors) }),
    },
  };
}

const SUGGESTED_VALUES = ['example', 'examples', 'x-example', 'default'];
// `enum` too: a required parameter would otherwise get the first of its allowed values.
const SUGGESTING_SCHEMA_KEYWORDS = [...SUGGESTED_VALUES, 'enum'];

/**
 * @template {SpecSelectors} Selectors
 * @param {Selectors} specSelectors
 * @returns {Selectors}
 */
function withoutSuggestedValues(specSelectors) {
  return {
    ...specSelectors,
    parameterWithMetaByIdentity: (...args) => {
      const parameter = specSelectors.parameterWithMetaByIdentity(...args);
      if (!isImmutableMap(parameter)) return parameter;
      const bare = withoutKeys(parameter, SUGGESTED_VALUES);
      const schema = parameter.get('schema');
      return isImmutableMap(schema) ? bare.set('schema', withoutKeys(schema, SUGGESTING_SCHEMA_KEYWORDS)) : bare;
    },
  };
}

/**
 * @param {unknown} value
 * @returns {value is ImmutableMap}
 */
function isImmutableMap(value) {
  if (typeof value !== 'object' || value === null) return false;
  const { get, delete: remove } = /** @type {Partial<Record<'get' | 'delete', unknown>>} */ (value);
  return typeof get === 'function' && typeof remove === 'function';
}

/**
 * @param {ImmutableMap} map
 * @param {readonly string[]} keys
 */
function withoutKeys(map, keys) {
  return keys.reduce((rest, key) => rest.delete(key), map);
}

/**
 * Names the shared schemas where swagger-ui's OpenAPI 3.1 view would write a bare type: it tells a
 * type from the schema alone, so `Pets` read `array<any>` (or `array<object>` once expanded) and a
 * status field `any` or `string`. A reference, `$ref` in the document or the `$$ref` swagger-ui
 * leaves on what it resolved, is shown by its component's name (`array<Pet>`, `PetStatus`).
 * @returns {{ wrapComponents: { JSONSchema202012KeywordType: Wrapper<KeywordTypeProps> } }}
 */
function SchemaNamesPlugin() {
  return {
    wrapComponents: {
      JSONSchema202012KeywordType: (Original, system) => (props) => {
        const name = namedType(props.schema);
        if (name === undefined) return system.React.createElement(Original, props);
        const className = 'json-schema-2020-12__attribute json-schema-2020-12__attribute--primary';
        // That class writes types in lower case; a component's name keeps its own. (A style set from
        // script is not an inline style attribute: the page's Content-Security-Policy allows it.)
        const style = { textTransform: 'none' };
        const text = props.isCircular ? `${name} [circular]` : name;
        return system.React.createElement('strong', { className, style }, text);
      },
    },
  };
}

const COMPONENT_SCHEMA = /#\/components\/schemas\/([^/]+)$/;

/**
 * @param {unknown} value
 * @returns {string | undefined}
 */
function namedType(value) {
  if (value === null || typeof value !== 'object') return undefined;
  const schema = /** @type {SchemaFields} */ (value);
  for (const reference of [schema.$ref, schema.$$ref]) {
    const name = typeof reference === 'string' ? COMPONENT_SCHEMA.exec(reference)?.[1] : undefined;
    if (name !== undefined) return decodeURIComponent(name);
  }
  const items = schema.type === 'array' ? namedType(schema.items) : undefined;
  return items === undefined ? undefined : `array<${items}>`;
}

/**
 * Renders a JSON response body as the service sent it, re-indented. swagger-ui's own rendering
 * parses and re-serialises the body, which rounds integers beyond 2^53 (a categoryId of
 * 9223372036854775807 would show as 9223372036854776000).
 * @returns {{ wrapComponents: { responseBody: Wrapper<ResponseBodyProps> } }}
 */
function ExactJsonPlugin() {
  return {
    wrapComponents: {
      responseBody: (Original, system) => (props) => {
        const text = typeof props.content === 'string' ? props.content : undefined;
        if (!/json/i.test(props.contentType ?? '') || text === undefined || !isJson(text)) {
          return system.React.createElement(Original, props);
        }
        const HighlightCode = props.getComponent('HighlightCode', true);
        const code = { language: 'json', downloadable: true, fileName: 'response.json', canCopy: true };
        return system.React.createElement(
          'div',
          null,
          system.React.createElement('h5', null, 'Response body'),
          system.React.createElement(HighlightCode, code, indentJson(text)),
        );
      },
    },
  };
}

/** @param {string} text */
function isJson(text) {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Indents valid JSON two spaces a level, like JSON.stringify(value, null, 2), keeping every token's text.
 * @param {string} text
 */
function indentJson(text) {
  let out = '';
  let depth = 0;
  let index = 0;
  const newline = () => '\n' + '  '.repeat(depth);
  while (index < text.length) {
    const char = text[index];
    if (char === '"') {
      const end = stringEnd(text, index);
      out += text.slice(index, end);
      index = end;
      continue;
    }
    index += 1;
    if (char === ' ' || char === '\t' || char === '\n' || char === '\r') continue;
    if (char === '{' || char === '[') {
      const close = char === '{' ? '}' : ']';
      const next = nextToken(text, index);
      if (text[next] === close) {
        out += char + close;
        index = next + 1;
      } else {
        depth += 1;
        out += char + newline();
      }
    } else if (char === '}' || char === ']') {
      depth -= 1;
      out += newline() + char;
    } else if (char === ',') out += ',' + newline();
    else if (char === ':') out += ': ';
    else out += char;
  }
  return out;
}

/**
 * The index just past the string literal that starts at `start`.
 * @param {string} text
 * @param {number} start
 */
function stringEnd(text, start) {
  let index = start + 1;
  while (text[index] !== '"') index += text[index] === '\\' ? 2 : 1;
  return index + 1;
}

/**
 * @param {string} text
 * @param {number} start
 */
function nextToken(text, start) {
  let index = start;
  while (/\s/.test(text[index] ?? '')) index += 1;
  return index;
}

globalThis.addEventListener('load', () => {
  SwaggerUIBundle({
    url: SPEC_URL,
    dom_id: '#swagger-ui',
    // The operation anchors (/docs#/pets/getPet) are what the deprecation Link header points at.
    deepLinking: true,
    layout: 'BaseLayout',
    presets: [SwaggerUIBundle.presets.apis],
    plugins: [ExactJsonPlugin, NoPrefillPlugin, SchemaNamesPlugin],
    // No third-party validator badge: the page calls nothing but its own origin.
    validatorUrl: null,
  });
});
