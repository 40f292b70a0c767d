import { readFile } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ErrorBodySchema, type ErrorCode } from '../../shared';

const codes = Object.keys(ERROR_CODES) as ErrorCode[];

describe('error code catalogue', () => {
  it('documents every code in docs/API.md', async () => {
    const doc = await readFile(new URL('../../docs/API.md', import.meta.url), 'utf8');
    const undocumented = codes.filter((code) => !new RegExp(`\\b${code}\\b`).test(doc));
    expect(undocumented).toEqual([]);
  });

  it('gives every code an HTTP error status and a message', () => {
    for (const code of codes) {
      const { statusCode, message } = ERROR_CODES[code];
      expect(statusCode, code).toBeGreaterThanOrEqual(400);
      expect(statusCode, code).toBeLessThan(600);
      expect(STATUS_CODES[statusCode], code).toBeTruthy();
      expect(message.length, code).toBeGreaterThan(0);
      expect(code).toMatch(/^[A-Z][A-Z_]*[A-Z]$/);
    }
  });

  it('lets the ErrorBody schema accept every catalogued code and nothing else', () => {
    const body = (code: string) => ({
      result: 'error',
      statusCode: 400,
      error: 'Bad Request',
      code,
      message: 'm',
      details: [],
    });
    for (const code of codes) expect(Value.Check(ErrorBodySchema, body(code)), code).toBe(true);
    expect(Value.Check(ErrorBodySchema, body('NOT_A_CODE'))).toBe(false);
    expect(Value.Check(ErrorBodySchema, { ...body('INTERNAL'), details: undefined })).toBe(false);
  });
});
