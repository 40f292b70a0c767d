import { Link } from 'react-router';
import type { GalleryItem } from '../api/portfolio-api';
import { AuthedImage } from '../components/AuthedImage';
import { paths } from '../paths';
import { StatusBadges } from '../portfolio/StatusBadges';
import { isStaff } from '../session/permissions';
import { useUser } from '../session/use-session';
import { useConflictedPortfolios } from '../sync/use-conflicted-portfolios';

export const CARD_IMAGE_WIDTH = 320;

/** A card's checkbox for a bulk action (editors and admins only). */
export interface CardSelection {
  checked: boolean;
  /** `range`: the shift key was held, so everything since the last click follows. */
  onToggle(checked: boolean, range: boolean): void;
}

export function PortfolioCard({
  item,
  selection,
}: {
  item: GalleryItem;
  selection?: CardSelection;
}) {
  const portfolioId = item.portfolioId ?? '';
  const title = item.projectTitle || 'Untitled';
  const conflicts = useConflictedPortfolios(isStaff(useUser())).get(portfolioId) ?? 0;
  return (
    <article className={`portfolio-card${selection?.checked ? ' portfolio-card--selected' : ''}`}>
      {selection && (
        <label className="card-select">
          <input
            type="checkbox"
            checked={selection.checked}
            onChange={(event) => {
              // React's change of a checkbox is its click: a mouse click tells the shift key.
              const native = event.nativeEvent as Partial<MouseEvent>;
              selection.onToggle(event.target.checked, native.shiftKey === true);
            }}
          />
          <span className="visually-hidden">Select {title}</span>
        </label>
      )}
      <AuthedImage
        portfolioId={portfolioId}
        fileId={item.cover?.fileId}
        width={CARD_IMAGE_WIDTH}
        alt={`Cover of ${title}`}
        className="card-cover"
      />
      <div className="card-body">
        <h2 className="card-title">
          {/* The whole card is clickable through this link's stretched ::after. */}
          <Link to={paths.portfolio(portfolioId)} className="card-link">
            {title}
          </Link>
        </h2>
        {(item.category || item.memberBarcode) && (
          <p className="card-meta">
            {item.category && <span>{item.category}</span>}
            {item.memberBarcode && <span className="mono">#{item.memberBarcode}</span>}
          </p>
        )}
        <StatusBadges
          published={item.published}
          active={item.active}
          staffPick={item.staffPick}
          conflicts={conflicts}
        />
      </div>
    </article>
  );
}

export function PortfolioCardSkeleton() {
  return (
    <div className="portfolio-card portfolio-card--skeleton" aria-hidden="true">
      <div className="skeleton card-cover-skeleton" />
      <div className="card-body">
        <div className="skeleton skeleton-line" />
        <div className="skeleton skeleton-line skeleton-line--short" />
      </div>
    </div>
  );
}
