/** One day in milliseconds: retention is configured in days (DESIGN §9). */
export const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * When a portfolio deleted at `deletedTime` is due to leave the trash for good: the retention
 * pass that runs first after this moment purges it.
 */
export const trashPurgeTime = (deletedTime: number, keepDays: number): number =>
  deletedTime + keepDays * DAY_MS;
