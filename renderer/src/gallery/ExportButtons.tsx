import { useState } from 'react';
import { describeError } from '../api/api-error';
import { exportPortfolios, type ExportParams } from '../api/portfolio-api';
import { useToast } from '../components/use-toast';

type Format = ExportParams['format'];

/** Saves a blob under `name` the way a download link would. */
function save(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // The click starts the download; the URL may go once the browser has taken it.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * Export of what the gallery shows now (its filter, search and order): a ZIP with history and
 * files to import into another library, or a CSV for a spreadsheet (DESIGN §11).
 */
export function ExportButtons({
  params,
  label = 'Export the portfolios shown',
  what = '',
}: {
  params: Omit<ExportParams, 'format'>;
  /** The group's name for assistive technology. */
  label?: string;
  /** Said after "Export ZIP"/"Export CSV", such as " selection". */
  what?: string;
}) {
  const toast = useToast();
  const [busy, setBusy] = useState<Format | null>(null);
  const run = async (format: Format) => {
    setBusy(format);
    try {
      const blob = await exportPortfolios({ ...params, format });
      save(blob, `portfolios-${new Date().toISOString().slice(0, 10)}.${format}`);
      toast.success(
        format === 'zip'
          ? 'The ZIP export is ready.'
          : format === 'pdf'
            ? 'The catalogue is ready.'
            : 'The CSV export is ready.',
      );
    } catch (error) {
      toast.error(`The export failed. ${describeError(error)}`);
    } finally {
      setBusy(null);
    }
  };
  return (
    <div className="export-buttons" role="group" aria-label={label}>
      <button
        type="button"
        className="button"
        disabled={busy !== null}
        title="Portfolios with their history and files, to import into another library"
        onClick={() => void run('zip')}
      >
        {busy === 'zip' ? 'Exporting…' : `Export ZIP${what}`}
      </button>
      <button
        type="button"
        className="button"
        disabled={busy !== null}
        title="One row per portfolio, for a spreadsheet"
        onClick={() => void run('csv')}
      >
        {busy === 'csv' ? 'Exporting…' : `Export CSV${what}`}
      </button>
      <button
        type="button"
        className="button"
        disabled={busy !== null}
        title="A printable catalogue: a cover page, then each portfolio with its images"
        onClick={() => void run('pdf')}
      >
        {busy === 'pdf' ? 'Making the catalogue…' : 'Catalogue (PDF)'}
      </button>
    </div>
  );
}
