import { describe, expect, it } from 'vitest';
import { ApiError } from '../../renderer/src/api/api-error';
import {
  changedFields,
  emptyValues,
  toCreateBody,
  toUpdateBody,
  validate,
} from '../../renderer/src/portfolio/portfolio-form-model';
import { splitServerError } from '../../renderer/src/portfolio/server-errors';

const filled = () => ({
  ...emptyValues(),
  memberBarcode: 'M-1',
  category: 'Ceramics',
  projectTitle: 'Bowls',
  projectDetail: 'Hand thrown',
});

describe('portfolio form rules', () => {
  it('names every missing required field and a malformed barcode', () => {
    expect(Object.keys(validate(emptyValues())).sort()).toEqual(
      ['category', 'memberBarcode', 'projectDetail', 'projectTitle'].sort(),
    );
    expect(validate({ ...filled(), memberBarcode: 'has space' }).memberBarcode).toMatch(
      /letters, digits/i,
    );
    expect(validate({ ...filled(), projectTitle: 'x'.repeat(201) }).projectTitle).toBe(
      'Project title holds at most 200 characters; remove 1 to save.',
    );
    expect(validate(filled())).toEqual({});
  });

  it('leaves empty optional fields out of a create body', () => {
    expect(toCreateBody({ ...filled(), generalTag: ['a'] })).toEqual({
      memberBarcode: 'M-1',
      category: 'Ceramics',
      projectTitle: 'Bowls',
      projectDetail: 'Hand thrown',
      generalTag: ['a'],
    });
  });

  it('sends emptied fields on update so they clear, and admin fields only for admins', () => {
    const editor = toUpdateBody({ ...filled(), staffPick: true }, { admin: false, revision: 3 });
    expect(editor).toMatchObject({ aboutProject: '', occasion: [], revision: 3 });
    expect(editor).not.toHaveProperty('staffPick');
    expect(toUpdateBody(filled(), { admin: true })).toMatchObject({
      staffPick: false,
      certificateByOrg: [],
    });
  });

  it('lists what changed, optionally ignoring admin fields', () => {
    const before = filled();
    const after = { ...before, projectTitle: 'Plates', staffPick: true };
    expect(changedFields(before, after)).toEqual(['projectTitle', 'staffPick']);
    expect(changedFields(before, after, false)).toEqual(['projectTitle']);
  });
});

describe('server 400 details', () => {
  it('land under the fields they name, including the detail spelling oboutProject', () => {
    const error = new ApiError(400, {
      result: 'error',
      statusCode: 400,
      error: 'Bad Request',
      code: 'VALIDATION_FAILED',
      message: 'body/projectTitle must NOT have more than 200 characters',
      details: [
        { field: 'body.projectTitle', message: 'must NOT have more than 200 characters' },
        { field: 'body.oboutProject', message: 'must be string' },
        { field: 'body.generalTag/3', message: 'must NOT have fewer than 1 characters' },
      ],
    });
    const { fieldErrors, formError } = splitServerError(error);
    expect(fieldErrors).toEqual({
      projectTitle: 'must NOT have more than 200 characters',
      aboutProject: 'must be string',
      generalTag: 'must NOT have fewer than 1 characters',
    });
    expect(formError).toMatch(/fields need attention/);
  });

  it('explain a refused file size or type in words', () => {
    const tooLarge = new ApiError(413, null);
    expect(splitServerError(tooLarge).formError).toMatch(/^Too large/);
  });
});
