import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { FileSlot } from '../../../shared';
import { ApiError, describeError } from '../api/api-error';
import { queryKeys } from '../api/query-keys';
import { uploadFiles } from '../api/upload-file';
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
      if (files.length === 0) return;
      const ids = files.map((file) => {
        const id = nextUploadId++;
        const previewUrl = file.type.startsWith('image/') ? URL.createObjectURL(file) : null;
        if (previewUrl) previews.current.set(id, previewUrl);
        setUploads((current) => [
          ...current,
          { id, name: file.name, size: file.size, previewUrl, progress: 0, error: null },
        ]);
        return id;
      });
      // The files chosen together go up as one request, one revision and one notice (DESIGN
      // §16); the cover takes one. Requests take turns, so lists keep the order chosen.
      const send = (batch: File[], batchIds: number[]): Promise<void> => {
        const setAll = (change: Partial<PendingUpload>) =>
          batchIds.forEach((id) => patch(id, change));
        return uploadFiles(portfolioId, slot, batch, (fraction) =>
          setAll({ progress: fraction }),
        ).promise.then(
          async () => {
            await queryClient.invalidateQueries({ queryKey: queryKeys.portfolio(portfolioId) });
            void queryClient.invalidateQueries({
              queryKey: queryKeys.portfolios,
              refetchType: 'none',
            });
            toast.success(
              batch.length === 1 ? `Uploaded ${batch[0]!.name}.` : `${batch.length} files added.`,
            );
            batchIds.forEach(remove);
          },
          async (error: unknown) => {
            // One refused file refuses the whole request: send them one by one, so the good
            // ones still arrive and the refused one says why.
            if (batch.length > 1 && error instanceof ApiError && error.status !== 409) {
              for (const [i, file] of batch.entries()) await send([file], [batchIds[i]!]);
              return;
            }
            const message = describeError(error);
            setAll({ error: message });
            toast.error(
              `${batch.map((file) => file.name).join(', ')} was not uploaded. ${message}`,
            );
          },
        );
      };
      const batches: Array<[File[], number[]]> =
        slot === 'cover' ? files.map((file, i) => [[file], [ids[i]!]]) : [[files, ids]];
      for (const [batch, batchIds] of batches)
        queue.current = queue.current.then(() => send(batch, batchIds));
    },
    [patch, portfolioId, queryClient, remove, slot, toast],
  );

  return { uploads, start, dismiss: remove };
}
