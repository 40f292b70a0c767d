import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { FileSlot } from '../../../shared';
import { describeError } from '../api/api-error';
import { queryKeys } from '../api/query-keys';
import { uploadFile } from '../api/upload-file';
import { useToast } from '../components/use-toast';

export interface PendingUpload {
  id: number;
  name: string;
  size: number;
  /** A local blob: URL for images, so the user sees what is going up before it arrives. */
  previewUrl: string | null;
  progress: number;
  error: string | null;
}

let nextUploadId = 1;

/** Uploads for one file slot of one portfolio, each with its own progress and outcome. */
export function useUploads(portfolioId: string, slot: FileSlot) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const [uploads, setUploads] = useState<PendingUpload[]>([]);
  const previews = useRef(new Map<number, string>());
  const queue = useRef<Promise<void>>(Promise.resolve());

  useEffect(() => {
    const urls = previews.current;
    return () => urls.forEach((url) => URL.revokeObjectURL(url));
  }, []);

  const patch = useCallback((id: number, change: Partial<PendingUpload>) => {
    setUploads((current) =>
      current.map((upload) => (upload.id === id ? { ...upload, ...change } : upload)),
    );
  }, []);

  const remove = useCallback((id: number) => {
    const url = previews.current.get(id);
    if (url) URL.revokeObjectURL(url);
    previews.current.delete(id);
    setUploads((current) => current.filter((upload) => upload.id !== id));
  }, []);

  const start = useCallback(
    (files: File[]) => {
      for (const file of files) {
        const id = nextUploadId++;
        const previewUrl = file.type.startsWith('image/') ? URL.createObjectURL(file) : null;
        if (previewUrl) previews.current.set(id, previewUrl);
        setUploads((current) => [
          ...current,
          { id, name: file.name, size: file.size, previewUrl, progress: 0, error: null },
        ]);
        // One at a time, in the order chosen: lists keep that order, and the server is
        // not asked to take many large bodies at once.
        queue.current = queue.current.then(() =>
          uploadFile(portfolioId, slot, file, '', (fraction) =>
            patch(id, { progress: fraction }),
          ).promise.then(
            async () => {
              await queryClient.invalidateQueries({ queryKey: queryKeys.portfolio(portfolioId) });
              void queryClient.invalidateQueries({
                queryKey: queryKeys.portfolios,
                refetchType: 'none',
              });
              toast.success(`Uploaded ${file.name}.`);
              remove(id);
            },
            (error: unknown) => {
              const message = describeError(error);
              patch(id, { error: message });
              toast.error(`${file.name} was not uploaded. ${message}`);
            },
          ),
        );
      }
    },
    [patch, portfolioId, queryClient, remove, slot, toast],
  );

  return { uploads, start, dismiss: remove };
}
