/* global SwaggerUIBundle, URL, document */
// Starts the API reference page (served by src/http/docs-page.ts). A plain script, loaded after the
// swagger-ui bundle; the page's Content-Security-Policy allows no inline script, so all set-up is here.
'use strict';

// The page is reachable as /docs, /docs/ and /docs/static/index.html: the document is found from
// this script's own address, which is the same for all three.
const SPEC_URL = new URL('../json', document.currentScript.src).href;

/**
 * Renders a JSON response body as the service sent it, re-indented. swagger-ui's own rendering
 * parses and re-serialises the body, which rounds integers beyond 2^53 (a categoryId of
 * 9223372036854775807 would show as 9223372036854776000).
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

function isJson(text) {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Indents valid JSON two spaces a level, like JSON.stringify(value, null, 2), keeping every token's text. */
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

/** The index just past the string literal that starts at `start`. */
function stringEnd(text, start) {
  let index = start + 1;
  while (text[index] !== '"') index += text[index] === '\\' ? 2 : 1;
  return index + 1;
}

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
    plugins: [ExactJsonPlugin],
    // No third-party validator badge: the page calls nothing but its own origin.
    validatorUrl: null,
  });
});
