import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import type { PortfolioDetail } from '../../../shared';
import { describeError } from '../api/api-error';
import { type FileObject, fileIdOf, reorderDrafting } from '../api/portfolio-api';
import { queryKeys } from '../api/query-keys';
import { useToast } from '../components/use-toast';

const idsOf = (files: FileObject[]) => files.map((file) => fileIdOf(file) ?? '');

/**
 * The drafting images in the order the person is arranging them. A move shows at once and is
 * saved in the background; moves made while one is being saved are saved after it, each with
 * the revision the previous one answered, so quick moves never trip over their own If-Match.
 */
export function useDraftingOrder(detail: PortfolioDetail) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const serverIds = idsOf(detail.draftingProcess).join('\n');
  const [order, setOrder] = useState<string[]>(() => idsOf(detail.draftingProcess));
  const [announcement, setAnnouncement] = useState('');
  const revision = useRef(detail.revision);
  const saving = useRef<Promise<void>>(Promise.resolve());
  const pending = useRef(0);

  // The server's order wins whenever nothing of ours is still on its way.
  useEffect(() => {
    if (pending.current > 0) return;
    revision.current = detail.revision;
    setOrder(serverIds === '' ? [] : serverIds.split('\n'));
  }, [serverIds, detail.revision]);

  const nameOf = (fileId: string) => {
    const file = detail.draftingProcess.find((item) => fileIdOf(item) === fileId);
    return file?.originalFilename ?? 'The image';
  };

  function save(next: string[]) {
    pending.current += 1;
    saving.current = saving.current.then(async () => {
      try {
        const answer = await reorderDrafting(detail.portfolioId, next, revision.current);
        revision.current = answer.revision;
      } catch (error) {
        toast.error(`The new order was not saved. ${describeError(error)}`);
      } finally {
        pending.current -= 1;
        if (pending.current === 0) {
          await queryClient.invalidateQueries({
            queryKey: queryKeys.portfolio(detail.portfolioId),
          });
        }
      }
    });
  }

  /** Moves a file to `to` (0-based), announces where it went, and saves the order. */
  function move(fileId: string, to: number) {
    const from = order.indexOf(fileId);
    if (from < 0 || to < 0 || to >= order.length || to === from) return;
    const next = [...order];
    next.splice(from, 1);
    next.splice(to, 0, fileId);
    setOrder(next);
    setAnnouncement(`${nameOf(fileId)} moved to position ${to + 1} of ${next.length}.`);
    save(next);
  }

  const files = order
    .map((fileId) => detail.draftingProcess.find((file) => fileIdOf(file) === fileId))
    .filter((file): file is NonNullable<typeof file> => file !== undefined);
  return { files, move, announcement };
}
