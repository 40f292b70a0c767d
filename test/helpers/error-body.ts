import { Value } from '@sinclair/typebox/value';
import { expect } from 'vitest';
import { ErrorBodySchema, type ErrorCode } from '../../shared';
import type { ApiResponse } from './test-server';

/**
 * Asserts an error answer: its status, its catalogued code, and the one error shape (DESIGN §6),
 * checked against the shared ErrorBody schema. Returns the body for further checks.
 */
export function expectError(response: ApiResponse, status: number, code: ErrorCode) {
  expect(
    { status: response.status, code: response.body?.code },
    JSON.stringify(response.body),
  ).toEqual({ status, code });
  expect(response.headers.get('content-type') ?? '').toContain('application/json');
  expect(Value.Check(ErrorBodySchema, response.body), JSON.stringify(response.body)).toBe(true);
  expect(response.body.statusCode).toBe(status);
  return response.body as { message: string; details: Array<{ field?: string; message: string }> };
}

/** The fields an error's details name, e.g. ["body.projectTitle"]. */
export function errorFields(response: ApiResponse): string[] {
  return (response.body?.details ?? []).map((detail: { field?: string }) => detail.field);
}
