import { useWindowVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useLayoutEffect, useState } from 'react';
import type { GalleryItem } from '../api/portfolio-api';
import { type CardSelection, PortfolioCard, PortfolioCardSkeleton } from './PortfolioCard';

const MIN_CARD_WIDTH = 220;
const GAP = 16;
const ESTIMATED_ROW_HEIGHT = 300;
const SKELETON_COUNT = 8;

interface GalleryGridProps {
  items: GalleryItem[];
  loading: boolean;
  hasNextPage: boolean;
  fetchingNextPage: boolean;
  fetchNextPage(): void;
  nextPageError: string | null;
  /** The checkbox of the item at `index`, when the user may select (editors and admins). */
  selectionOf?: (item: GalleryItem, index: number) => CardSelection;
}

function columnsFor(width: number): number {
  return Math.max(1, Math.floor((width + GAP) / (MIN_CARD_WIDTH + GAP)));
}

/**
 * Cards in rows, and only the rows near the viewport exist in the DOM: thousands of
 * portfolios cost no more than a screenful. Reaching the end loads the next page.
 */
export function GalleryGrid({
  items,
  loading,
  hasNextPage,
  fetchingNextPage,
  fetchNextPage,
  nextPageError,
  selectionOf,
}: GalleryGridProps) {
  const [container, setContainer] = useState<HTMLDivElement | null>(null);
  const [columns, setColumns] = useState(4);
  const [scrollMargin, setScrollMargin] = useState(0);

  useLayoutEffect(() => {
    if (!container) return;
    const measure = () => {
      setColumns(columnsFor(container.clientWidth));
      setScrollMargin(container.getBoundingClientRect().top + window.scrollY);
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(container);
    return () => observer.disconnect();
  }, [container]);

  const rowCount = Math.ceil(items.length / columns);
  const virtualizer = useWindowVirtualizer({
    count: rowCount,
    estimateSize: () => ESTIMATED_ROW_HEIGHT,
    overscan: 3,
    scrollMargin,
    gap: GAP,
  });
  const rows = virtualizer.getVirtualItems();
  const lastRendered = rows[rows.length - 1]?.index ?? -1;

  useEffect(() => {
    if (hasNextPage && !fetchingNextPage && !nextPageError && lastRendered >= rowCount - 2)
      fetchNextPage();
  }, [lastRendered, rowCount, hasNextPage, fetchingNextPage, nextPageError, fetchNextPage]);

  if (loading) {
    return (
      <div className="card-grid" aria-busy="true" aria-label="Loading portfolios">
        {Array.from({ length: SKELETON_COUNT }, (_, index) => (
          <PortfolioCardSkeleton key={index} />
        ))}
      </div>
    );
  }

  return (
    <section aria-label="Portfolios">
      <div
        ref={setContainer}
        className="virtual-grid"
        style={{ height: virtualizer.getTotalSize() }}
      >
        {rows.map((row) => (
          <div
            key={row.key}
            data-index={row.index}
            ref={virtualizer.measureElement}
            className="card-grid card-grid--row"
            style={{
              gridTemplateColumns: `repeat(${columns}, minmax(0, 1fr))`,
              transform: `translateY(${row.start - virtualizer.options.scrollMargin}px)`,
            }}
          >
            {items.slice(row.index * columns, row.index * columns + columns).map((item, column) => (
              <PortfolioCard
                key={item.portfolioId}
                item={item}
                selection={selectionOf?.(item, row.index * columns + column)}
              />
            ))}
          </div>
        ))}
      </div>
      <div className="grid-footer">
        {fetchingNextPage && <p role="status">Loading more portfolios…</p>}
        {nextPageError && (
          <p role="alert">
            More portfolios could not be loaded. {nextPageError}{' '}
            <button type="button" className="button" onClick={fetchNextPage}>
              Try again
            </button>
          </p>
        )}
        {hasNextPage && !fetchingNextPage && !nextPageError && (
          // Keyboard and assistive-technology users may never "scroll to the end".
          <button type="button" className="button" onClick={fetchNextPage}>
            Load more
          </button>
        )}
      </div>
    </section>
  );
}
