import { linkTarget } from './link-header.ts';

/** Type and code of the warning, so that a program can recognise or silence it. */
export const DEPRECATION_WARNING_TYPE = 'PetstoreDeprecationWarning';
export const DEPRECATION_WARNING_CODE = 'PETSTORE_GET_PET_DEPRECATED';

interface WarningProcess {
  emitWarning(message: string, options: { type: string; code: string }): void;
}

// Once per process (per loaded copy of the client), however many clients and calls there are.
let warned = false;

function emit(message: string): void {
  const host = (globalThis as { process?: Partial<WarningProcess> }).process;
  if (typeof host?.emitWarning === 'function') {
    host.emitWarning(message, { type: DEPRECATION_WARNING_TYPE, code: DEPRECATION_WARNING_CODE });
  } else {
    console.warn(`${DEPRECATION_WARNING_TYPE}: ${message}`);
  }
}

/** Warns the first time a response of `GET /v1/pets/{petId}` says that the operation is deprecated. */
export function warnIfDeprecated(headers: Headers, responseUrl: string): void {
  if (warned || !headers.has('deprecation')) return;
  warned = true;
  const sunset = headers.get('sunset');
  const note = linkTarget(headers, 'deprecation', responseUrl);
  emit(
    'GET /v1/pets/{petId} (client.pets.get) is deprecated' +
      (sunset === null ? '' : ` and is removed on ${sunset}`) +
      '; use GET /v1/pets with the status filter (client.pets.list({ status })) instead.' +
      (note === undefined ? '' : ` Migration note: ${note.href}`),
  );
}
