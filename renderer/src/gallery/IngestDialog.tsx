import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { PORTFOLIO_FIELDS } from '../../../shared';
import { describeError } from '../api/api-error';
import { ingestPortfolio, missingBlobs, putBlob, sha256Of } from '../api/ingest-api';
import { queryKeys } from '../api/query-keys';
import { TextField } from '../components/TextField';
import { useModalDialog } from '../components/use-modal-dialog';
import type { IngestGroup, SkippedFile } from './folder-ingest';

interface IngestDialogProps {
  groups: IngestGroup[];
  skipped: SkippedFile[];
  onClose(): void;
}

interface Progress {
  phase: 'Reading' | 'Sending';
  files: number;
  totalFiles: number;
  bytes: number;
  totalBytes: number;
  startedMs: number;
  /** When it was last told: the rate and time left are as of then. */
  nowMs: number;
}

/** `12 of 40 files, 61.2 of 200.0 MB, 35.1 MB/s, about 4 s left`. */
function progressWords(p: Progress): string {
  const seconds = (p.nowMs - p.startedMs) / 1000;
  const rate = seconds > 0 ? p.bytes / seconds : 0;
  const left = rate > 0 ? Math.round((p.totalBytes - p.bytes) / rate) : null;
  const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
  return (
    `${p.phase}: ${p.files} of ${p.totalFiles} files, ${mb(p.bytes)} of ${mb(p.totalBytes)} MB, ` +
    `${mb(rate)} MB/s${left === null || p.bytes === 0 ? '' : `, about ${left} s left`}`
  );
}

/**
 * Makes one portfolio per dropped folder (or one of loose files, whose title is asked for):
 * every file is hashed here, only the blobs the server lacks are sent, then each portfolio is
 * found or made with its files attached by sha256 (POST /api/v1/portfolio/ingest).
 */
export function IngestDialog({ groups, skipped, onClose }: IngestDialogProps) {
  const ref = useModalDialog(true);
  const titleId = useId();
  const queryClient = useQueryClient();
  const loose = groups.some((group) => group.folder === null);
  const [memberBarcode, setMemberBarcode] = useState('');
  const [category, setCategory] = useState('');
  const [title, setTitle] = useState('');
  const [progress, setProgress] = useState<Progress | null>(null);
  const [results, setResults] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [running, setRunning] = useState(false);
  const [finished, setFinished] = useState(false);

  async function start(event: FormEvent) {
    event.preventDefault();
    setRunning(true);
    setError(null);
    try {
      const files = groups.flatMap((group) => group.files);
      const reading: Progress = {
        phase: 'Reading',
        files: 0,
        totalFiles: files.length,
        bytes: 0,
        totalBytes: files.reduce((sum, item) => sum + item.file.size, 0),
        startedMs: Date.now(),
        nowMs: Date.now(),
      };
      const hashes = new Map<File, string>();
      for (const item of files) {
        hashes.set(item.file, await sha256Of(item.file));
        reading.files++;
        reading.bytes += item.file.size;
        setProgress({ ...reading, nowMs: Date.now() });
      }
      const missing = await missingBlobs([...new Set(hashes.values())]);
      const toSend = files.filter((item) => missing.delete(hashes.get(item.file)!));
      const sending: Progress = {
        phase: 'Sending',
        files: 0,
        totalFiles: toSend.length,
        bytes: 0,
        totalBytes: toSend.reduce((sum, item) => sum + item.file.size, 0),
        startedMs: Date.now(),
        nowMs: Date.now(),
      };
      setProgress({ ...sending, nowMs: Date.now() });
      for (const item of toSend) {
        await putBlob(hashes.get(item.file)!, item.file, (bytes) => {
          sending.bytes += bytes;
          setProgress({ ...sending, nowMs: Date.now() });
        });
        sending.files++;
        setProgress({ ...sending, nowMs: Date.now() });
      }
      for (const group of groups) {
        const projectTitle = group.folder ?? title.trim();
        const result = await ingestPortfolio({
          portfolio: {
            memberBarcode: memberBarcode.trim(),
            category: category.trim(),
            projectTitle,
            projectDetail: projectTitle,
          },
          files: group.files.map((item) => ({
            slot: item.slot,
            sha256: hashes.get(item.file)!,
            originalFilename: item.name.split('/').at(-1)!,
          })),
        }).catch((cause: unknown) => {
          throw new Error(`“${projectTitle}”: ${describeError(cause)}`);
        });
        setResults((lines) => [
          ...lines,
          result.created
            ? `Made “${projectTitle}” with ${result.added} files.`
            : `Added ${result.added} files to “${projectTitle}” (${result.kept} there already).`,
        ]);
      }
      setFinished(true);
    } catch (cause) {
      setError(describeError(cause));
    } finally {
      setRunning(false);
      void queryClient.invalidateQueries({ queryKey: queryKeys.portfolios });
    }
  }

  const count = groups.length;
  return (
    <dialog
      ref={ref}
      className="dialog dialog--wide"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        if (!running) onClose();
      }}
    >
      <h2 id={titleId}>
        Add {count} {count === 1 ? 'portfolio' : 'portfolios'} from files
      </h2>
      <form className="dialog-body" onSubmit={(event) => void start(event)}>
        <p>
          {groups
            .map((group) => `${group.folder ?? 'Loose files'} (${group.files.length} files)`)
            .join(', ')}
          . In each, the first image by name is the cover, the other images the drafting process,
          documents the additional documents. Files already on the server are not sent again.
        </p>
        {skipped.length > 0 && (
          <p>
            Left out: {skipped.length} {skipped.length === 1 ? 'file' : 'files'} (
            {[...new Set(skipped.map((item) => item.reason))].join('; ')}).
          </p>
        )}
        <TextField
          label="Member barcode"
          value={memberBarcode}
          onChange={setMemberBarcode}
          required
          limit={PORTFOLIO_FIELDS.memberBarcode.maxLength}
        />
        <TextField
          label="Category"
          value={category}
          onChange={setCategory}
          required
          limit={PORTFOLIO_FIELDS.category.maxLength}
        />
        {loose && (
          <TextField
            label="Project title for the loose files"
            value={title}
            onChange={setTitle}
            required
            limit={PORTFOLIO_FIELDS.projectTitle.maxLength}
          />
        )}
        <div className="ingest-progress" role="status" aria-live="polite">
          {progress && (
            <>
              <progress max={progress.totalBytes || 1} value={progress.bytes} />
              <p>{progressWords(progress)}</p>
            </>
          )}
          {results.map((line) => (
            <p key={line}>{line}</p>
          ))}
        </div>
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose} disabled={running}>
            {finished ? 'Close' : 'Cancel'}
          </button>
          {!finished && (
            <button type="submit" className="button button--primary" disabled={running}>
              {running ? 'Adding…' : 'Add'}
            </button>
          )}
        </div>
      </form>
    </dialog>
  );
}
