/** Where a phase of work stands: what is done of what there is, since when. */
export interface ProgressState {
  files: number;
  totalFiles: number;
  bytes: number;
  totalBytes: number;
  startedMs: number;
  nowMs: number;
}

/** `12/40 files, 61.2/200.0 MB, 35.1 MB/s, 4 s left` (time left only once a rate is known). */
export function progressLine(phase: string, state: ProgressState): string {
  const seconds = (state.nowMs - state.startedMs) / 1000;
  const rate = seconds > 0 ? state.bytes / seconds : 0;
  const left = rate > 0 ? (state.totalBytes - state.bytes) / rate : undefined;
  return (
    `${phase}: ${state.files}/${state.totalFiles} files, ` +
    `${mb(state.bytes)}/${mb(state.totalBytes)} MB, ${mb(rate)} MB/s` +
    (left === undefined || state.bytes === 0 ? '' : `, ${duration(left)} left`)
  );
}

function mb(bytes: number): string {
  return (bytes / 1e6).toFixed(1);
}

/** `4 s`, `3 min 5 s`, `2 h 10 min`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/**
 * Progress on stderr: a line rewritten in place on a terminal (at most 4 times a second),
 * otherwise a line a second, and always the last one of each phase.
 */
export class Progress {
  private state: ProgressState;
  private lastMs = 0;
  private readonly tty: boolean;

  constructor(
    private readonly phase: string,
    totalFiles: number,
    totalBytes: number,
    private readonly out: NodeJS.WriteStream = process.stderr,
    private readonly clock: () => number = Date.now,
  ) {
    const now = clock();
    this.state = { files: 0, totalFiles, bytes: 0, totalBytes, startedMs: now, nowMs: now };
    this.tty = out.isTTY === true;
  }

  add(bytes: number, files = 0): void {
    this.state.bytes += bytes;
    this.state.files += files;
    const now = this.clock();
    if (now - this.lastMs >= (this.tty ? 250 : 1000)) this.show(now);
  }

  end(): void {
    this.show(this.clock());
    if (this.tty) this.out.write('\n');
  }

  private show(now: number): void {
    this.lastMs = now;
    const line = progressLine(this.phase, { ...this.state, nowMs: now });
    this.out.write(this.tty ? `\r\x1b[K${line}` : `${line}\n`);
  }
}
