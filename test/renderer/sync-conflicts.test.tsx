// @vitest-environment happy-dom
import { cleanup, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import type { PortfolioDetail } from '../../shared';
import type { Conflict } from '../../renderer/src/api/sync-api';
import { commandLabel } from '../../renderer/src/history/revision-diff';
import { StatusBadges } from '../../renderer/src/portfolio/StatusBadges';
import { ConflictPanel } from '../../renderer/src/sync/ConflictPanel';
import { renderWithApp, useFakeApi } from './support/render';

afterEach(cleanup);

const detail: PortfolioDetail = {
  portfolioId: 'p1',
  memberBarcode: 'M-1',
  category: 'Ceramics',
  projectTitle: 'Riverside (hub)',
  cover: null,
  oboutProject: 'About',
  projectDetail: 'Detail',
  draftingProcess: [],
  projectLanuching: '',
  readyToBuy: '',
  occasion: [],
  referenceStyling: [],
  generalTag: ['kiln'],
  additionalDocument: [],
  relativeCategory: [],
  certificateByOrg: [],
  certificateDesc: '',
  staffPick: false,
  createdDate: 1,
  modifiedTime: 2,
  createdBy: 'editor',
  modifiedBy: 'admin',
  published: true,
  active: true,
  revision: 7,
};

/** A same-field conflict as the hub stores it (shared/schemas/sync.ts). */
const conflict: Conflict = {
  conflictId: 'c-1',
  portfolioId: 'p1',
  kind: 'field',
  createdTime: Date.UTC(2026, 10, 22, 12),
  by: 'curator',
  replicaId: 'r-1',
  mutationId: 'r-1:p1:4',
  baseRevision: 5,
  fields: {
    projectTitle: { base: 'Riverside', current: 'Riverside (hub)', theirs: 'Riverside (desk)' },
    staffPick: { base: false, current: false, theirs: true },
  },
  note: 'projectTitle and staffPick were changed on both sides.',
};

function conflictApi() {
  return useFakeApi()
    .on('GET /api/v1/portfolio/p1/conflicts', { status: 200, body: { conflicts: [conflict] } })
    .on('POST /api/v1/conflicts/c-1/resolve', { status: 200, body: { ...detail, revision: 8 } });
}

describe('the conflict panel', () => {
  it('shows both values of each field side by side, with the base small beside the label', async () => {
    conflictApi();
    renderWithApp(<ConflictPanel detail={detail} canResolve />);

    const table = await screen.findByRole('table');
    const headers = within(table)
      .getAllByRole('columnheader')
      .map((cell) => cell.textContent);
    expect(headers).toEqual(['Field', 'Current', 'Theirs (curator)']);
    const title = within(table).getByRole('row', { name: /Project title/ });
    expect(
      within(title)
        .getAllByRole('cell')
        .map((cell) => cell.textContent),
    ).toEqual(['Riverside (hub)', 'Riverside (desk)']);
    expect(within(title).getByRole('rowheader').textContent).toContain(
      'Before both edits: Riverside',
    );
    const pick = within(table).getByRole('row', { name: /Staff pick/ });
    expect(
      within(pick)
        .getAllByRole('cell')
        .map((cell) => cell.textContent),
    ).toEqual(['No', 'Yes']);
  });

  it.each([
    ['Keep current', { keep: 'current', revision: 7 }],
    ['Keep theirs', { keep: 'theirs', revision: 7 }],
  ])('%s sends that choice, conditional on the revision shown', async (button, body) => {
    const api = conflictApi();
    renderWithApp(<ConflictPanel detail={detail} canResolve />);
    await userEvent.setup().click(await screen.findByRole('button', { name: button }));
    expect(await screen.findByText(/The conflict is resolved/)).toBeTruthy();
    expect(api.sent('POST /api/v1/conflicts/c-1/resolve').map((request) => request.body)).toEqual([
      body,
    ]);
  });

  it('resolves with edited values that override both sides', async () => {
    const api = conflictApi();
    renderWithApp(<ConflictPanel detail={detail} canResolve />);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Edit…' }));
    const title = screen.getByLabelText('Project title');
    await user.clear(title);
    await user.type(title, 'Riverside (agreed)');
    await user.click(screen.getByLabelText('Staff pick'));
    await user.click(screen.getByRole('button', { name: 'Save and resolve' }));

    expect(await screen.findByText('The conflict is resolved with your edit.')).toBeTruthy();
    expect(api.sent('POST /api/v1/conflicts/c-1/resolve')[0]?.body).toEqual({
      keep: 'current',
      fields: { projectTitle: 'Riverside (agreed)', staffPick: true },
      revision: 7,
    });
  });

  it('says why a resolve failed, and offers no buttons to who may not edit', async () => {
    useFakeApi()
      .on('GET /api/v1/portfolio/p1/conflicts', { status: 200, body: { conflicts: [conflict] } })
      .on('POST /api/v1/conflicts/c-1/resolve', {
        status: 409,
        body: {
          result: 'error',
          code: 'REVISION_CONFLICT',
          message: 'The portfolio was changed by someone else.',
        },
      });
    const { unmount } = renderWithApp(<ConflictPanel detail={detail} canResolve />);
    await userEvent.setup().click(await screen.findByRole('button', { name: 'Keep theirs' }));
    expect((await screen.findByRole('alert')).textContent).toMatch(/changed by someone else/);
    unmount();

    renderWithApp(<ConflictPanel detail={detail} canResolve={false} />);
    expect(await screen.findByRole('table')).toBeTruthy();
    expect(screen.queryByRole('button')).toBeNull();
  });

  it('shows nothing when the portfolio has no conflict', async () => {
    const api = useFakeApi().on('GET /api/v1/portfolio/p1/conflicts', {
      status: 200,
      body: { conflicts: [] },
    });
    const { container } = renderWithApp(<ConflictPanel detail={detail} canResolve />);
    await expect.poll(() => api.requests.length).toBe(1);
    expect(container.querySelector('.conflict-panel')).toBeNull();
  });

  it('shows a delete conflict by its note, with the portfolio kept on request', async () => {
    const deleted: Conflict = {
      ...conflict,
      conflictId: 'c-2',
      kind: 'delete',
      fields: {},
      note: 'Deleted on a device while edited here: the portfolio stays.',
    };
    const api = useFakeApi()
      .on('GET /api/v1/portfolio/p1/conflicts', { status: 200, body: { conflicts: [deleted] } })
      .on('POST /api/v1/conflicts/c-2/resolve', { status: 200, body: { ...detail, revision: 8 } });
    renderWithApp(<ConflictPanel detail={detail} canResolve />);
    expect(await screen.findByText(deleted.note)).toBeTruthy();
    expect(screen.queryByRole('table')).toBeNull();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Keep this portfolio' }));
    await expect.poll(() => api.sent('POST /api/v1/conflicts/c-2/resolve').length).toBe(1);
  });
});

describe('a delete conflict', () => {
  const deleteConflict = (sides: { current: boolean; theirs: boolean }): Conflict => ({
    ...conflict,
    conflictId: 'c-3',
    kind: 'delete',
    fields: { deleted: { base: false, ...sides } },
    note: 'curator deleted this portfolio on another device without having seen the changes.',
  });

  // Deleted on a device against an edit here (theirs deleted), and an edit that brought back
  // what was deleted (the current side had deleted it): each button names the outcome.
  for (const [shape, sides, keep, trash] of [
    ['deleted elsewhere', { current: false, theirs: true }, 'current', 'theirs'],
    ['deleted here, edited elsewhere', { current: true, theirs: false }, 'theirs', 'current'],
  ] as const) {
    it(`offers both outcomes by keyboard (${shape}): keep it, or let the delete stand`, async () => {
      const api = useFakeApi()
        .on('GET /api/v1/portfolio/p1/conflicts', {
          status: 200,
          body: { conflicts: [deleteConflict(sides)] },
        })
        .on('POST /api/v1/conflicts/c-3/resolve', {
          status: 200,
          body: { ...detail, revision: 8 },
        });
      const { unmount } = renderWithApp(<ConflictPanel detail={detail} canResolve />);
      const user = userEvent.setup();
      const keepButton = await screen.findByRole('button', { name: 'Keep this portfolio' });
      const trashButton = screen.getByRole('button', { name: 'Move it to the trash' });
      // The words of both outcomes describe the buttons; the `deleted` marker is no table row.
      expect(keepButton.getAttribute('aria-describedby')).toBeTruthy();
      expect(screen.getByText(/can be restored from the Trash/)).toBeTruthy();
      expect(screen.queryByRole('table')).toBeNull();
      expect(screen.queryByRole('button', { name: 'Keep theirs' })).toBeNull();

      keepButton.focus();
      await user.keyboard('{Enter}');
      expect(await screen.findByText(/“Riverside \(hub\)” is kept/)).toBeTruthy();
      trashButton.focus();
      await user.keyboard('{Enter}');
      expect(await screen.findByText(/The delete stands: .* is in the trash/)).toBeTruthy();
      expect(api.sent('POST /api/v1/conflicts/c-3/resolve').map((request) => request.body)).toEqual(
        [
          { keep, revision: 7 },
          { keep: trash, revision: 7 },
        ],
      );
      unmount();
    });
  }
});

describe('file fields in a conflict', () => {
  const file = {
    fileId: 'f1',
    originalFilename: 'a.jpg',
    fullFileExtension: 'jpg',
    mimeType: 'image/jpeg',
    description: '',
    createdTime: 1,
    modifiedTime: 1,
  };
  const withFiles = (fields: Conflict['fields']): Conflict => ({
    ...conflict,
    conflictId: 'c-4',
    fields,
  });

  it('says why a cover cannot be typed and where to change it; Edit… only where a value can be typed', async () => {
    useFakeApi().on('GET /api/v1/portfolio/p1/conflicts', {
      status: 200,
      body: {
        conflicts: [withFiles({ cover: { base: null, current: file, theirs: null } })],
      },
    });
    const { unmount } = renderWithApp(<ConflictPanel detail={detail} canResolve />);
    expect(await screen.findByRole('button', { name: 'Keep theirs' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Edit…' })).toBeNull();
    expect(screen.getByText(/holds files, which cannot be typed here/)).toBeTruthy();
    expect(screen.getByRole('link', { name: 'edit page' }).getAttribute('href')).toBe(
      '/portfolios/p1/edit',
    );
    unmount();
  });

  it('edits the typed fields beside a file list, and says the files keep the current ones', async () => {
    const api = useFakeApi()
      .on('GET /api/v1/portfolio/p1/conflicts', {
        status: 200,
        body: {
          conflicts: [
            withFiles({
              projectTitle: { base: 'a', current: 'b', theirs: 'c' },
              additionalDocument: { base: [], current: [file], theirs: [] },
            }),
          ],
        },
      })
      .on('POST /api/v1/conflicts/c-4/resolve', { status: 200, body: { ...detail, revision: 8 } });
    renderWithApp(<ConflictPanel detail={detail} canResolve />);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Edit…' }));
    const form = screen.getByRole('form', { name: 'Edit the conflicting values' });
    expect(within(form).getByText(/keeps the current files/)).toBeTruthy();
    await user.clear(within(form).getByLabelText('Project title'));
    await user.type(within(form).getByLabelText('Project title'), 'agreed');
    await user.click(within(form).getByRole('button', { name: 'Save and resolve' }));
    await expect.poll(() => api.sent('POST /api/v1/conflicts/c-4/resolve').length).toBe(1);
    expect(api.sent('POST /api/v1/conflicts/c-4/resolve')[0]?.body).toEqual({
      keep: 'current',
      fields: { projectTitle: 'agreed' },
      revision: 7,
    });
  });
});

describe('conflicts elsewhere', () => {
  it('marks a card with its open conflicts', () => {
    renderWithApp(<StatusBadges published active conflicts={2} />);
    expect(screen.getByRole('list', { name: 'Status' }).textContent).toBe('2 conflicts');
  });

  it('names a resolve and what sync did in the history list', () => {
    expect(commandLabel('resolve-conflict')).toBe('Resolved a sync conflict');
    expect(commandLabel('sync')).toBe('Synced with the team server');
    expect(commandLabel('sync-merge')).toBe('Merged with edits from the team server');
  });
});
