import { useCallback, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { describeError } from '../api/api-error';
import { DebouncedTextField } from '../components/DebouncedTextField';
import { BulkBar, type GallerySelection } from '../gallery/BulkBar';
import { ExportButtons } from '../gallery/ExportButtons';
import { GalleryGrid } from '../gallery/GalleryGrid';
import {
  type GalleryView,
  type TriState,
  SORT_OPTIONS,
  hasFilters,
  listParamsOf,
  moreFilterCount,
  searchFromView,
  viewFromSearch,
} from '../gallery/gallery-view';
import { useGalleryList } from '../gallery/use-gallery-list';
import { usePickLists } from '../portfolio/use-facets';
import { givenByDrop, givenByPicker, planIngest, type GivenFile } from '../gallery/folder-ingest';
import { IngestDialog } from '../gallery/IngestDialog';
import { paths } from '../paths';
import { isAdmin, isStaff } from '../session/permissions';
import { useUser } from '../session/use-session';
import { useDocumentTitle } from '../components/use-document-title';
import { useSlashToFocus } from '../components/use-slash-to-focus';

/** The filters offering the values in use (the form asks for every facet key). */
const GALLERY_PICK_LISTS = ['category', 'readyToBuy'] as const;

const NOTHING_CHOSEN = { allIn: null, ids: new Set<string>() };

export function GalleryPage() {
  useDocumentTitle('Gallery');
  const user = useUser();
  const staff = isStaff(user);
  const [search, setSearch] = useSearchParams();
  const view = useMemo(() => viewFromSearch(search), [search]);
  const params = listParamsOf(view, staff);
  const list = useGalleryList(params);
  const pickLists = usePickLists(GALLERY_PICK_LISTS);

  // The URL as this page last set it: two changes made before the next render (a cleared search
  // and a category typed right after, each committed when typing pauses) must both stay.
  // React Router hands a functional update the location of the last render, so the second
  // would bring the first one's old value back.
  const latestSearch = useRef(search);
  useLayoutEffect(() => {
    latestSearch.current = search;
  }, [search]);
  const update = useCallback(
    (change: Partial<GalleryView>, replace = false) => {
      const next = searchFromView({ ...viewFromSearch(latestSearch.current), ...change });
      latestSearch.current = next;
      setSearch(next, { replace });
    },
    [setSearch],
  );
  const commitText = useCallback(
    (key: 'q' | 'category' | 'memberBarcode' | 'readyToBuy') => (value: string) =>
      update({ [key]: value }, true),
    [update],
  );
  const commitQ = useMemo(() => commitText('q'), [commitText]);
  const commitCategory = useMemo(() => commitText('category'), [commitText]);
  const commitMember = useMemo(() => commitText('memberBarcode'), [commitText]);
  const commitReady = useMemo(() => commitText('readyToBuy'), [commitText]);

  const items = useMemo(() => list.data?.pages.flatMap((page) => page.lists) ?? [], [list.data]);
  const total = list.data?.pages[0]?.total;
  const filtered = hasFilters(view);
  // On a phone the filters below the search box fold away behind a button.
  const [filtersOpen, setFiltersOpen] = useState(false);
  const moreFilters = moreFilterCount(view, staff);
  const searchBox = useRef<HTMLInputElement>(null);
  useSlashToFocus(searchBox);
  // Files dropped on the page, or picked as a folder: one portfolio per folder (staff only).
  const [ingest, setIngest] = useState<ReturnType<typeof planIngest> | null>(null);
  const [dragging, setDragging] = useState(false);
  const offer = (given: GivenFile[]) => {
    if (given.length > 0) setIngest(planIngest(given));
  };
  const dropHandlers = staff
    ? {
        onDragOver: (event: React.DragEvent) => {
          if (!event.dataTransfer.types.includes('Files')) return;
          event.preventDefault();
          setDragging(true);
        },
        onDragLeave: (event: React.DragEvent) => {
          if (event.currentTarget === event.target) setDragging(false);
        },
        onDrop: (event: React.DragEvent) => {
          if (!event.dataTransfer.types.includes('Files')) return;
          event.preventDefault();
          setDragging(false);
          void givenByDrop(event.dataTransfer).then(offer);
        },
      }
    : {};

  // Multi-select for bulk actions (editors and admins): by id, or "all matching" the view.
  // "All matching" holds for the filter and search it was chosen in: another view drops it.
  const [chosen, setChosen] = useState<{ allIn: string | null; ids: ReadonlySet<string> }>(
    NOTHING_CHOSEN,
  );
  const lastToggled = useRef<number | null>(null);
  const scopeKey = `${params.filter ?? ''}\n${params.q ?? ''}`;
  const selection: GallerySelection = useMemo(
    () => ({ all: chosen.allIn === scopeKey, ids: chosen.ids }),
    [chosen, scopeKey],
  );
  const selectionOf = useCallback(
    (item: { portfolioId?: string }, index: number) => {
      const portfolioId = item.portfolioId ?? '';
      return {
        checked: selection.all || selection.ids.has(portfolioId),
        onToggle(checked: boolean, range: boolean) {
          const from = range && lastToggled.current !== null ? lastToggled.current : index;
          const [start, end] = from < index ? [from, index] : [index, from];
          lastToggled.current = index;
          setChosen((current) => {
            // Unticking one of "all matching" keeps the others that are loaded.
            const ids = new Set(
              current.allIn === scopeKey ? items.map((one) => one.portfolioId ?? '') : current.ids,
            );
            for (const one of items.slice(start, end + 1)) {
              if (checked) ids.add(one.portfolioId ?? '');
              else ids.delete(one.portfolioId ?? '');
            }
            return { allIn: null, ids };
          });
        },
      };
    },
    [selection, items, scopeKey],
  );

  return (
    <div className={`page gallery-page${dragging ? ' gallery-page--drop' : ''}`} {...dropHandlers}>
      <div className="page-heading">
        <h1>Gallery</h1>
        <p className="result-count" role="status" aria-live="polite">
          {total === undefined
            ? ''
            : `${total} ${total === 1 ? 'portfolio' : 'portfolios'}${filtered ? ' match' : ''}`}
        </p>
        {total !== undefined && total > 0 && <ExportButtons params={params} />}
        {staff && (
          <Link to={paths.importZip()} className="button">
            Import ZIP
          </Link>
        )}
        {staff && (
          <label className="button">
            Add a folder
            <input
              type="file"
              className="visually-hidden"
              multiple
              // A folder picker; each folder in it becomes a portfolio, as when dropped here.
              {...{ webkitdirectory: '' }}
              onChange={(event) => {
                offer(givenByPicker(event.target.files ?? []));
                event.target.value = '';
              }}
            />
          </label>
        )}
        {staff && (
          <Link to={paths.newPortfolio()} className="button button--primary">
            New portfolio
          </Link>
        )}
      </div>

      <div
        role="search"
        className={`toolbar${filtersOpen ? ' toolbar--open' : ''}`}
        aria-label="Search and filter portfolios"
      >
        <DebouncedTextField
          type="search"
          label="Search titles, text and tags"
          value={view.q}
          onCommit={commitQ}
          inputRef={searchBox}
          keyShortcut="/"
          placeholder="Press / to search"
        />
        <button
          type="button"
          className="button toolbar-toggle"
          aria-expanded={filtersOpen}
          onClick={() => setFiltersOpen((open) => !open)}
        >
          Filters
          {moreFilters > 0 && (
            <span className="badge badge--count">
              {moreFilters}
              <span className="visually-hidden"> set</span>
            </span>
          )}
        </button>
        <div className="toolbar-more">
          <DebouncedTextField
            label="Category"
            value={view.category}
            onCommit={commitCategory}
            suggestions={pickLists.category}
          />
          <DebouncedTextField
            label="Member barcode"
            value={view.memberBarcode}
            onCommit={commitMember}
          />
          <DebouncedTextField
            label="Ready to buy"
            value={view.readyToBuy}
            onCommit={commitReady}
            suggestions={pickLists.readyToBuy}
          />
          <TriStateSelect
            label="Staff pick"
            value={view.staffPick}
            yes="Staff picks"
            no="Not picked"
            onChange={(staffPick) => update({ staffPick })}
          />
          {staff && (
            <>
              <TriStateSelect
                label="Published"
                value={view.published}
                yes="Published"
                no="Unpublished"
                onChange={(published) => update({ published })}
              />
              <TriStateSelect
                label="Active"
                value={view.active}
                yes="Active"
                no="Inactive"
                onChange={(active) => update({ active })}
              />
            </>
          )}
          <label className="field field--compact">
            <span className="field-label">Sort by</span>
            <select value={view.sort} onChange={(event) => update({ sort: event.target.value })}>
              {SORT_OPTIONS.map((option) => (
                <option key={option.value} value={option.value}>
                  {option.label}
                </option>
              ))}
            </select>
          </label>
        </div>
        {filtered && (
          <button
            type="button"
            className="button button--quiet"
            onClick={() =>
              setSearch(
                searchFromView({ ...viewFromSearch(new URLSearchParams()), sort: view.sort }),
              )
            }
          >
            Clear filters
          </button>
        )}
      </div>

      {staff && (
        <p className="drop-hint">Drop folders or files here to make one portfolio per folder.</p>
      )}
      {ingest && (
        <IngestDialog
          groups={ingest.groups}
          skipped={ingest.skipped}
          onClose={() => setIngest(null)}
        />
      )}

      {list.isError && !list.data ? (
        <div className="empty-state" role="alert">
          <p>The portfolios could not be loaded. {describeError(list.error)}</p>
          <button type="button" className="button" onClick={() => void list.refetch()}>
            Try again
          </button>
        </div>
      ) : !list.isPending && items.length === 0 ? (
        <div className="empty-state">
          {filtered ? (
            <p>No portfolios match this search. Try other filters, or clear them.</p>
          ) : (
            <p>
              No portfolios yet.{' '}
              {staff && <Link to={paths.newPortfolio()}>Create the first one</Link>}
            </p>
          )}
        </div>
      ) : (
        <GalleryGrid
          items={items}
          loading={list.isPending}
          hasNextPage={list.hasNextPage}
          fetchingNextPage={list.isFetchingNextPage}
          fetchNextPage={() => void list.fetchNextPage()}
          nextPageError={list.isFetchNextPageError ? describeError(list.error) : null}
          selectionOf={staff ? selectionOf : undefined}
        />
      )}
      {staff && (
        <BulkBar
          selection={selection}
          total={total ?? 0}
          params={params}
          items={items}
          admin={isAdmin(user)}
          onSelectAll={() => setChosen({ allIn: scopeKey, ids: new Set() })}
          onClear={() => {
            lastToggled.current = null;
            setChosen(NOTHING_CHOSEN);
          }}
        />
      )}
    </div>
  );
}

interface TriStateSelectProps {
  label: string;
  value: TriState;
  yes: string;
  no: string;
  onChange(value: TriState): void;
}

function TriStateSelect({ label, value, yes, no, onChange }: TriStateSelectProps) {
  return (
    <label className="field field--compact">
      <span className="field-label">{label}</span>
      <select value={value} onChange={(event) => onChange(event.target.value as TriState)}>
        <option value="">Any</option>
        <option value="true">{yes}</option>
        <option value="false">{no}</option>
      </select>
    </label>
  );
}
