import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { exactInteger } from '../json-body.ts';
import { petToJson } from '../../pets/pet-json.ts';
import { keptBody } from '../../net/representation.ts';
import { sendKept } from '../kept-reply.ts';
import {
  ListPetsQuerySchema,
  NewPetRef,
  PetIdParamsSchema,
  PetRef,
  PetsRef,
  type NewPetBody,
} from '../../pets/pet-schemas.ts';
import type { PetPage, PetService } from '../../pets/pet-service.ts';
import type { PetRecord } from '../../domain/pet.ts';
import {
  errorResponses,
  headerRefs,
  notModifiedResponse,
  PET_EXAMPLE,
  PETS_EXAMPLE,
  RATE_LIMIT_HEADERS,
  REPRESENTATION_HEADERS,
  RESPONSE_HEADERS,
  type HeaderUse,
} from '../openapi-responses.ts';

export interface PetsRouteOptions {
  readonly pets: PetService;
  /** Absolute origin for Location and Link headers; empty for relative references. */
  readonly publicBaseUrl: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** The headers of a listPets 200, and of its 304. */
const PAGE_HEADERS: readonly HeaderUse[] = [
  ['Link', 'RFC 8288 `rel="next"` link, absent on the last page.'],
  ['ETag', 'On a full page (one with a `next` link), which never changes; absent on the last page.'],
  ...RATE_LIMIT_HEADERS,
  ...RESPONSE_HEADERS,
  'Vary',
  'Content-Encoding',
];

/** The headers of a getPet 200, and of its 304. */
const PET_HEADERS: readonly HeaderUse[] = [
  'Deprecation',
  'Sunset',
  ['Link', '`rel="deprecation"` link to the migration note.'],
  ...RATE_LIMIT_HEADERS,
  ...RESPONSE_HEADERS,
  ...REPRESENTATION_HEADERS,
];

/** The pets operations of v1: HTTP in, calls of the pet service (src/pets/pet-service.ts), HTTP out. */
export const petRoutes: FastifyPluginAsync<PetsRouteOptions> = async (app, options) => {
  listPetsRoute(app, options);
  createPetRoute(app, options);
  getPetRoute(app, options);
};

function listPetsRoute(untyped: FastifyInstance, { pets, publicBaseUrl }: PetsRouteOptions): void {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/pets',
    {
      config: { usage: 'listPets', scope: 'pets:read' },
      schema: {
        operationId: 'listPets',
        tags: ['pets'],
        summary: 'List pets',
        description:
          'Pets in ascending `id` order. When more may follow, a `Link: <…>; rel="next"` header carries ' +
          'the URL of the next page (same filters and limit, plus an opaque `cursor`). The last page has ' +
          'no next link. Unknown query parameters are ignored; a repeated known parameter is refused. ' +
          'A full page never changes and carries an `ETag`; `If-None-Match` with it answers `304`.',
        querystring: ListPetsQuerySchema,
        response: {
          200: {
            description: 'A page of pets.',
            headers: headerRefs(...PAGE_HEADERS),
            content: { 'application/json': { schema: PetsRef, example: PETS_EXAMPLE } },
          },
          304: notModifiedResponse(...PAGE_HEADERS),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    // Returns nothing once sent: Fastify would await a returned reply until the response ends.
    async (request, reply) => {
      const { limit = 20, status, cursor } = request.query;
      const filter = status === undefined ? '' : `&status=${status}`;
      const nextPage = `${publicBaseUrl}/v1/pets?limit=${limit}${filter}&cursor=`;
      const page = await pets.list({ limit, status, cursor });
      sendPage(reply, page, nextPage);
    },
  );
}

function createPetRoute(untyped: FastifyInstance, { pets, publicBaseUrl }: PetsRouteOptions): void {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/v1/pets',
    {
      config: { usage: 'createPet', scope: 'pets:write' },
      schema: {
        operationId: 'createPet',
        tags: ['pets'],
        summary: 'Add a pet',
        description:
          'Strict: unknown fields (`id` included) are refused. `categoryId` is any int64 and is kept digit ' +
          'for digit. An optional `Idempotency-Key` header makes retries safe: the same key and body return ' +
          'the first response; the same key with another body is 422; a retry while the first is in flight ' +
          'is 409. Keys are kept 24 hours per account. A 503 does not tell whether the pet was created: ' +
          'retried with the same key, it is created once; without a key, a retry may create it twice.',
        headers: Type.Object({
          'idempotency-key': Type.Optional(
            Type.String({
              pattern: '^[\\x21-\\x7e]{1,255}$',
              description: 'Makes a retry return the first response.',
              'x-expectation': '1 to 255 visible ASCII characters, sent once',
            }),
          ),
        }),
        body: NewPetRef,
        response: {
          201: {
            description: 'The pet was added and is durable.',
            headers: headerRefs('Location', 'Idempotent-Replayed', ...RATE_LIMIT_HEADERS, ...RESPONSE_HEADERS),
            content: { 'application/json': { schema: PetRef, example: PET_EXAMPLE } },
          },
          ...errorResponses(400, 401, 409, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const categoryId = exactIntegerOf(body);
      const idempotencyKey = request.headers['idempotency-key'];
      const principal = request.principal;
      const outcome = await pets.create(
        { name: body.name, categoryId, status: body.status ?? null },
        idempotencyKey !== undefined && principal ? { accountId: principal.accountId, key: idempotencyKey } : undefined,
      );
      if (outcome.replayed) reply.header('idempotent-replayed', 'true');
      reply.header('location', `${publicBaseUrl}/v1/pets/${outcome.petId}`);
      sendJson(reply, outcome.body, outcome.statusCode);
    },
  );
}

/** The deprecated read of one pet. */
function getPetRoute(untyped: FastifyInstance, { pets }: PetsRouteOptions): void {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  const sunset = pets.deprecation.sunsetAt.toUTCString();
  app.get(
    '/v1/pets/:petId',
    {
      // Deprecated: plugins/deprecation-notices.ts adds the headers, marks the document and counts the calls.
      config: { usage: 'getPet', scope: 'pets:read', deprecation: pets.deprecation },
      schema: {
        operationId: 'getPet',
        tags: ['pets'],
        summary: 'Get a pet (deprecated)',
        description:
          `**Deprecated** since ${pets.deprecation.deprecatedAt.toUTCString()}; removed on ${sunset}, ` +
          'after which it answers 410 `gone`. **Migration:** use `GET /v1/pets` with the `status` filter. ' +
          'Responses carry `Deprecation`, `Sunset` and `Link: <…>; rel="deprecation"` headers pointing here. ' +
          'A pet never changes: `If-None-Match` with its `ETag` answers `304`.',
        params: PetIdParamsSchema,
        response: {
          200: {
            description: 'The pet.',
            headers: headerRefs(...PET_HEADERS),
            content: { 'application/json': { schema: PetRef, example: PET_EXAMPLE } },
          },
          304: notModifiedResponse(...PET_HEADERS),
          ...errorResponses(400, 401, 404, 410, 429),
        },
      },
    },
    async (request, reply) => {
      const pet = await pets.get(exactInteger(request.params, 'petId', request.params.petId));
      sendPet(reply, pet);
    },
  );
}

/** `nextPage`: the URL of the next page without its cursor. */
function sendPage(reply: FastifyReply, page: PetPage, nextPage: string): void {
  if (page.nextCursor !== undefined) reply.header('link', `<${nextPage}${page.nextCursor}>; rel="next"`);
  // A cached page's bytes are kept with it, with its ETag and compressed forms; the last page is read fresh.
  if (page.cached)
    sendKept(
      reply.type(JSON_TYPE),
      keptBody(page, () => page.json),
    );
  else sendJson(reply, page.json);
}

/** A pet never changes: its answer carries a strong ETag (and a matching If-None-Match gets 304). */
function sendPet(reply: FastifyReply, pet: PetRecord): void {
  sendKept(
    reply.type(JSON_TYPE),
    keptBody(pet, () => petToJson(pet)),
  );
}

/**
 * Sends a body serialised by hand (src/pets/pet-json.ts) where the route's type wants the object,
 * with a status that may come from storage (an idempotent replay): the contract tests check that
 * both match the document.
 */
function sendJson(reply: FastifyReply, json: string, statusCode = 200): void {
  reply.code(statusCode).type(JSON_TYPE).send(json);
}

function exactIntegerOf(body: NewPetBody): bigint {
  return exactInteger(body, 'categoryId', body.categoryId);
}
