import { useState } from 'react';
import { describeError } from '../api/api-error';
import { fetchFile } from '../api/portfolio-api';
import { useToast } from '../components/use-toast';

/** Downloads through fetch, because a plain link cannot carry the session header. */
export function DownloadButton({
  portfolioId,
  fileId,
  filename,
}: {
  portfolioId: string;
  fileId: string;
  filename: string;
}) {
  const [busy, setBusy] = useState(false);
  const toast = useToast();

  async function download() {
    setBusy(true);
    try {
      const url = URL.createObjectURL(await fetchFile(portfolioId, fileId));
      const anchor = document.createElement('a');
      anchor.href = url;
      anchor.download = filename;
      anchor.click();
      // Give the browser a moment to start the download before freeing the bytes.
      window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (error) {
      toast.error(`The download failed. ${describeError(error)}`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <button
      type="button"
      className="button button--small"
      onClick={() => void download()}
      disabled={busy}
      aria-label={`Download ${filename}`}
    >
      {busy ? 'Downloading…' : 'Download'}
    </button>
  );
}
