import type { HistoryOptions, TrashOptions } from '../config';
import type { PortfolioRepository } from '../repositories/portfolio-repository-contract';
import { DAY_MS as DAY } from '../domain/retention';
import type { BlobStore } from './blob-store';

export interface RetentionJobOptions {
  repository: PortfolioRepository;
  blobs: BlobStore;
  history: HistoryOptions;
  trash: TrashOptions;
  log: { info(msg: string): void; error(obj: unknown, msg: string): void };
  /** Runs a pass unless another instance is running one (then undefined); default: runs it. */
  exclusive?: (pass: () => Promise<RetentionReport>) => Promise<RetentionReport | undefined>;
  /** Collect unreferenced blobs on every pass, not only after this pass removed something. */
  alwaysCollect?: boolean;
}

/** What one pass removed. */
export interface RetentionReport {
  revisions: number;
  purged: number;
  tombstones: number;
  blobs: number;
}

/**
 * Keeps history and trash within their retention (DESIGN §9): drops revisions the policy no
 * longer keeps, purges portfolios deleted longer ago than the trash keeps them, forgets their
 * tombstones once they have been purged as long again, and then removes the blobs that nothing
 * kept refers to any more. One pass at a time.
 */
export class RetentionJob {
  private running: Promise<RetentionReport> | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: RetentionJobOptions) {}

  /** Runs a pass now (as if at `now`), or joins the one under way. */
  run(now = Date.now()): Promise<RetentionReport> {
    const exclusive = this.options.exclusive ?? ((pass) => pass());
    this.running ??= exclusive(() => this.pass(now))
      .then((report) => report ?? { revisions: 0, purged: 0, tombstones: 0, blobs: 0 })
      .finally(() => (this.running = null));
    return this.running;
  }

  /**
   * A first pass `firstAfterMs` from now, then one every `intervalMs`; the timers never keep the
   * process alive. Not at once: a pass walks every portfolio's kept revisions, and at start it
   * would be in the way of the first requests (at 100k portfolios it ran before the server
   * listened).
   */
  start(intervalMs: number, firstAfterMs: number): void {
    const runLogged = () =>
      void this.run().catch((error: unknown) =>
        this.options.log.error({ err: error }, 'History and trash retention failed'),
      );
    this.timer = setTimeout(() => {
      runLogged();
      this.timer = setInterval(runLogged, intervalMs);
      this.timer.unref();
    }, firstAfterMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => {});
  }

  private async pass(now: number): Promise<RetentionReport> {
    const { repository, history, trash } = this.options;
    const trashCutoff = now - trash.keepDays * DAY;
    // A tombstone lives as long after its purge as the portfolio was in the trash, so a client
    // that syncs at least once per trash period never needs a full resync. Forgotten before
    // this pass purges, so that a tombstone made now lives a full period.
    const tombstones = await repository.forgetTombstones(trashCutoff);
    const revisions = await repository.pruneRevisions(
      history.enabled
        ? { keepSince: now - history.keepDays * DAY, keepNewest: history.keepNewest }
        : { keepSince: Infinity, keepNewest: 1 },
    );
    const purged = (await repository.purge({ deletedBefore: trashCutoff })).length;
    const blobs =
      revisions + purged > 0 || this.options.alwaysCollect
        ? await this.options.blobs.collectUnreferenced(await repository.referencedBlobs())
        : 0;
    const report = { revisions, purged, tombstones, blobs };
    if (revisions + purged + tombstones + blobs > 0) {
      this.options.log.info(
        `Retention: dropped ${revisions} revision(s), purged ${purged} portfolio(s) from the ` +
          `trash, forgot ${tombstones} tombstone(s), removed ${blobs} blob(s)`,
      );
    }
    return report;
  }
}
