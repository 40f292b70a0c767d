import {
  BULK_MAX_PORTFOLIOS,
  BulkEditBodySchema,
  BulkUndoBodySchema,
  isStaff,
  type BulkAnswer,
  type BulkEditBody,
  type BulkResult,
} from '../../shared';
import { ApiError } from '../errors';
import { bodyValidator } from '../validation/body-validator';
import type { Caller, PortfolioService } from './portfolio-service';
import { UndoTokens } from './undo-tokens';

/**
 * What undoes one portfolio's change, if it is still as the change left it (at revision `at`):
 * its content and state of `revision` again, back from the trash, or back to it.
 */
export type UndoStep =
  | { portfolioId: string; kind: 'revert'; revision: number; at: number }
  | { portfolioId: string; kind: 'untrash'; at: number }
  | { portfolioId: string; kind: 'trash'; at: number };

/** Portfolios changed side by side: the embedded store commits them as one group write. */
const CONCURRENCY = 16;

const validateEdit = bodyValidator(BulkEditBodySchema);
const validateUndo = bodyValidator(BulkUndoBodySchema);

/** One portfolio's outcome: its result, and what would undo it when it changed. */
interface Outcome {
  result: BulkResult;
  undo?: UndoStep;
}

/**
 * Bulk edit and its undo (DESIGN §16). Each portfolio is changed by the portfolio service on its
 * own, as one revision with the same rules as a request of its own; what one portfolio refuses
 * (403, 404, 409, 400) is reported in its result and leaves it unchanged, and the others go on.
 */
export class BulkService {
  private readonly tokens: UndoTokens<UndoStep>;

  constructor(
    private readonly portfolios: PortfolioService,
    now: () => number = Date.now,
  ) {
    this.tokens = new UndoTokens(now);
  }

  async edit(user: Caller, rawBody: unknown): Promise<BulkAnswer> {
    assertStaff(user);
    const body = validateEdit(rawBody);
    assertSomethingToDo(body);
    const ids = await this.select(user, body);
    const outcomes = await inParallel(ids, (id) =>
      this.attempt(id, () => this.applyOne(user, id, body)),
    );
    return this.answer(user, outcomes);
  }

  async undo(user: Caller, rawBody: unknown): Promise<BulkAnswer> {
    assertStaff(user);
    const { undoToken } = validateUndo(rawBody);
    const steps = this.tokens.take(user.username, undoToken);
    if (!steps) throw new ApiError('UNDO_NOT_FOUND');
    const outcomes = await inParallel(steps, (step) =>
      this.attempt(step.portfolioId, () => this.undoOne(user, step), changedSince),
    );
    return this.answer(user, outcomes);
  }

  /** The portfolios named, or those the filter and search match among what the caller sees. */
  private async select(user: Caller, body: BulkEditBody): Promise<string[]> {
    if (body.ids) return [...new Set(body.ids)];
    const { ids, total } = await this.portfolios.listing.matchingIds(
      user,
      { filter: body.filter, q: body.q },
      BULK_MAX_PORTFOLIOS,
    );
    if (total > BULK_MAX_PORTFOLIOS) {
      throw new ApiError(
        'BULK_TOO_MANY',
        `The selection matches ${total.toLocaleString('en')} portfolios; one bulk edit changes at most ${BULK_MAX_PORTFOLIOS.toLocaleString('en')}. Narrow the filter or the search.`,
        [{ field: 'body.filter', message: `matches ${total} portfolios` }],
      );
    }
    return ids;
  }

  private async applyOne(user: Caller, id: string, body: BulkEditBody): Promise<Outcome> {
    const expected = body.expected?.[id];
    if (body.command === 'trash') {
      const entry = await this.portfolios.delete(user, id, { ifMatch: expected });
      return {
        result: { portfolioId: id, status: 200, revision: entry.revision },
        undo: { portfolioId: id, kind: 'untrash', at: entry.revision },
      };
    }
    if (body.command === 'restore') {
      const record = await this.portfolios.restoreFromTrash(user, id, { revision: expected });
      return {
        result: { portfolioId: id, status: 200, revision: record.revision },
        undo: { portfolioId: id, kind: 'trash', at: record.revision },
      };
    }
    const { set, addTags, removeTags, command } = body;
    const record = await this.portfolios.bulkChange(
      user,
      id,
      { set, addTags, removeTags, command },
      expected,
    );
    return {
      result: { portfolioId: id, status: 200, revision: record.revision },
      undo: { portfolioId: id, kind: 'revert', revision: record.revision - 1, at: record.revision },
    };
  }

  /** Undoing one change makes a change of its own, which the next undo (a redo) undoes. */
  private async undoOne(user: Caller, step: UndoStep): Promise<Outcome> {
    const id = step.portfolioId;
    if (step.kind === 'untrash') {
      const record = await this.portfolios.restoreFromTrash(user, id, { revision: step.at });
      return {
        result: { portfolioId: id, status: 200, revision: record.revision },
        undo: { portfolioId: id, kind: 'trash', at: record.revision },
      };
    }
    if (step.kind === 'trash') {
      const entry = await this.portfolios.delete(user, id, { ifMatch: step.at });
      return {
        result: { portfolioId: id, status: 200, revision: entry.revision },
        undo: { portfolioId: id, kind: 'untrash', at: entry.revision },
      };
    }
    const record = await this.portfolios.revert(user, id, step.revision, step.at);
    return {
      result: { portfolioId: id, status: 200, revision: record.revision },
      undo: { portfolioId: id, kind: 'revert', revision: record.revision - 1, at: record.revision },
    };
  }

  /** A refusal of this one portfolio becomes its result; a fault of the server stays a fault. */
  private async attempt(
    portfolioId: string,
    task: () => Promise<Outcome>,
    words: (error: ApiError) => string = (error) => error.message,
  ): Promise<Outcome> {
    try {
      return await task();
    } catch (error) {
      if (!(error instanceof ApiError) || !isItemStatus(error.statusCode)) throw error;
      return {
        result: { portfolioId, status: error.statusCode, code: error.code, message: words(error) },
      };
    }
  }

  private answer(user: Caller, outcomes: Outcome[]): BulkAnswer {
    const steps = outcomes.flatMap((outcome) => (outcome.undo ? [outcome.undo] : []));
    return {
      results: outcomes.map((outcome) => outcome.result),
      undoToken: steps.length > 0 ? this.tokens.issue(user.username, steps) : null,
    };
  }
}

const ITEM_STATUSES = [400, 403, 404, 409] as const;

function isItemStatus(status: number): status is (typeof ITEM_STATUSES)[number] {
  return (ITEM_STATUSES as readonly number[]).includes(status);
}

/** An undo skips what was changed after the action: say so in those words. */
function changedSince(error: ApiError): string {
  return error.code === 'REVISION_CONFLICT'
    ? 'It was changed after this action, so it was left as it is.'
    : error.message;
}

function assertStaff(user: Caller): void {
  if (!isStaff(user)) throw new ApiError('FORBIDDEN', 'Viewers cannot change portfolios.');
}

/** A selection (ids, or filter and search) and something to do with it; trash moves alone. */
function assertSomethingToDo(body: BulkEditBody): void {
  const bySearch = body.filter !== undefined || body.q !== undefined;
  if (body.ids && bySearch) {
    throw invalid(
      'body.ids',
      'Name the portfolios by ids, or select them by filter and search, not both.',
    );
  }
  if (!body.ids && !bySearch) {
    throw invalid('body.ids', 'Name the portfolios (ids), or select them (filter, q).');
  }
  const edits = [body.set, body.addTags, body.removeTags].some(
    (part) => part !== undefined && Object.keys(part).length > 0,
  );
  const moves = body.command === 'trash' || body.command === 'restore';
  if (moves && edits) {
    throw invalid(
      'body.command',
      'Moving to or from the trash cannot be combined with other changes.',
    );
  }
  if (!edits && body.command === undefined) {
    throw invalid('body.set', 'Say what to change: set, addTags, removeTags or command.');
  }
  if (body.command === 'restore' && !body.ids) {
    throw invalid(
      'body.command',
      'Portfolios in the trash are named by their ids to restore them.',
    );
  }
}

function invalid(field: string, message: string): ApiError {
  return new ApiError('VALIDATION_FAILED', message, [{ field, message }]);
}

/** `task` for each item, at most CONCURRENCY at a time; the results in the items' order. */
async function inParallel<I, O>(items: I[], task: (item: I) => Promise<O>): Promise<O[]> {
  const results = new Array<O>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  return results;
}
