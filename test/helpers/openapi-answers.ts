import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';

/**
 * Checks real answers against the server's own OpenAPI document: the operation must be
 * documented, the status must be one it lists, and a JSON body must match that status's schema
 * (error answers: with one of the codes listed for it). test-server.ts runs it on every answer
 * its `request` gets, so every HTTP test also tests the contract.
 */

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components?: Record<string, unknown>;
}

const DOCUMENT_ID = 'https://portfolio-manager.invalid/openapi.json';

export class OpenApiAnswers {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  private readonly routes: Array<{ pattern: RegExp; path: string }>;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: Document) {
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: document.components ?? {} });
    // Fewer parameters first: a static path (/portfolio/bulk) wins over a template
    // (/portfolio/{portfolioId}), as it does in the router.
    this.routes = Object.keys(document.paths)
      .sort((a, b) => parameters(a) - parameters(b))
      .map((path) => ({
        path,
        pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      }));
  }

  /** Throws an error that says what differs, when the answer is not one the document allows. */
  check(method: string, url: string, status: number, contentType: string, body: unknown): void {
    const pathname = new URL(url, 'http://host').pathname;
    if (!pathname.startsWith('/api/')) return; // the UI and /docs are not part of the API
    const route = this.routes.find((candidate) => candidate.pattern.test(pathname));
    const operation = route && this.document.paths[route.path]?.[method.toLowerCase()];
    if (!route || !operation) {
      if (status === 404 && isError(body, 'ROUTE_NOT_FOUND')) return;
      return this.fail(method, pathname, status, 'the operation is not documented', body);
    }
    const response = operation.responses?.[String(status)];
    if (!response)
      return this.fail(method, route.path, status, 'the status is not documented', body);
    const schema = response.content?.['application/json']?.schema;
    if (method === 'HEAD' || schema === undefined || !contentType.includes('json')) return;
    const validate = this.validator(`${method} ${route.path} ${status}`, schema);
    if (!validate(body)) {
      const problems = this.ajv.errorsText(validate.errors, { dataVar: 'body' });
      this.fail(method, route.path, status, `the body does not match: ${problems}`, body);
    }
  }

  private validator(key: string, schema: unknown): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(anchored(schema) as object);
      this.validators.set(key, validate);
    }
    return validate;
  }

  private fail(method: string, path: string, status: number, why: string, body: unknown): never {
    const shown = JSON.stringify(body)?.slice(0, 500);
    throw new Error(`OpenAPI: ${method} ${path} answered ${status}, but ${why}. Body: ${shown}`);
  }
}

function isError(body: unknown, code: string): boolean {
  return typeof body === 'object' && body !== null && (body as { code?: unknown }).code === code;
}

/** The schema with its `#/components/...` references pointed at the document added to Ajv. */
function anchored(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(anchored);
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith('#/')
        ? DOCUMENT_ID + value
        : anchored(value),
    ]),
  );
}

function parameters(path: string): number {
  return path.split('{').length - 1;
}
