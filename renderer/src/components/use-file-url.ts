import { useQuery } from '@tanstack/react-query';
import { fetchFile, fetchThumbnail } from '../api/portfolio-api';
import { queryKeys } from '../api/query-keys';

/**
 * An object URL for a portfolio file or its thumbnail. Files need the session header, which
 * an <img src> cannot send, so the bytes are fetched and shown through a blob: URL. The URL
 * lives in the query cache and is revoked when the cache drops it (see revokeFileUrls).
 */
export function useFileUrl(
  portfolioId: string,
  fileId: string | undefined,
  width: number | 'full',
  enabled = true,
) {
  return useQuery({
    queryKey: queryKeys.fileBlob(portfolioId, fileId ?? '', width),
    queryFn: async ({ signal }) => {
      const blob =
        width === 'full'
          ? await fetchFile(portfolioId, fileId ?? '', signal)
          : await fetchThumbnail(portfolioId, fileId ?? '', width, signal);
      return URL.createObjectURL(blob);
    },
    enabled: enabled && Boolean(fileId),
    staleTime: Infinity,
    retry: false,
  });
}
