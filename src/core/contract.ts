import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { OpenAPIBackend, type Document, type Operation } from 'openapi-backend';

// ajv-formats is CommonJS: its default export arrives as the module itself.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export type Backend = OpenAPIBackend;
export type { Operation };

/** generated/openapi.json, found from src/ (tsx, tests) and from dist/src/ (the build) alike. */
export const specPath = [
  new URL('../../generated/openapi.json', import.meta.url),
  new URL('../../../generated/openapi.json', import.meta.url),
]
  .map((url) => fileURLToPath(url))
  .find((candidate) => fs.existsSync(candidate)) as string;

export function loadSpec(): Document {
  return JSON.parse(fs.readFileSync(specPath, 'utf8')) as Document;
}

/** The bundled contract, dereferenced, with JSON Schema 2020-12 validation (OpenAPI 3.1). */
export async function createBackend(document: Document = loadSpec()): Promise<Backend> {
  const backend = new OpenAPIBackend({
    definition: document,
    apiRoot: '/',
    strict: false,
    validate: true,
    ignoreTrailingSlashes: true,
    // Validators are compiled per operation on first use: startup takes milliseconds instead of seconds
    // for the whole contract. The bundle has internal references only, which quick mode dereferences.
    quick: true,
    customizeAjv: (_ajv: unknown, ajvOpts: object) => {
      const ajv = new Ajv2020({ ...ajvOpts, strict: false, allErrors: true });
      addFormats(ajv);
      return ajv as never;
    },
  });
  // openapi-backend checks documents against the OpenAPI 3.0 schema; Redocly lints ours as 3.1 instead.
  backend.validateDefinition = () => document;
  await backend.init();
  return backend;
}
