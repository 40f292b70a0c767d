import { useMutation, useQueryClient } from '@tanstack/react-query';
import {
  type DragEvent,
  type KeyboardEvent,
  useId,
  useLayoutEffect,
  useRef,
  useState,
} from 'react';
import { type FileSlot, type PortfolioDetail, LIMITS } from '../../../shared';
import { describeError } from '../api/api-error';
import {
  type FileObject,
  deleteFile,
  fileIdOf,
  makeCover,
  updateFileDescription,
} from '../api/portfolio-api';
import { queryKeys } from '../api/query-keys';
import { AuthedImage } from '../components/AuthedImage';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { characterCount, tooLongMessage } from '../components/character-count';
import { useToast } from '../components/use-toast';
import { fileKindLabel, formatBytes, isRasterImage } from '../lib/format';
import { DescribeSelected } from './DescribeSelected';
import { DownloadButton } from './DownloadButton';
import { useDraftingOrder } from './use-drafting-order';
import { type PendingUpload, useUploads } from './use-uploads';

/** The drag of a drafting image to a new place carries its id under this type. */
const DRAG_TYPE = 'application/x-portfolio-drafting-file';

interface SlotSpec {
  slot: FileSlot;
  title: string;
  addLabel: string;
  accept?: string;
  multiple: boolean;
  hint: string;
}

const SLOTS: SlotSpec[] = [
  {
    slot: 'cover',
    title: 'Cover',
    addLabel: 'Choose a cover image',
    accept: 'image/*',
    multiple: false,
    hint: 'One image; a new one replaces the current cover.',
  },
  {
    slot: 'draftingProcess',
    title: 'Drafting process',
    addLabel: 'Add drafting images',
    accept: 'image/*',
    multiple: true,
    hint: 'Images of how the project came about. Several at once are fine.',
  },
  {
    slot: 'additionalDocument',
    title: 'Additional documents',
    addLabel: 'Add documents',
    multiple: true,
    hint: 'Any documents, for example PDFs. Several at once are fine.',
  },
];

function filesIn(detail: PortfolioDetail, slot: FileSlot): FileObject[] {
  if (slot === 'cover') return detail.cover?.fileId ? [detail.cover] : [];
  return detail[slot];
}

/** Which files are ticked for one description, shared by every slot. */
interface Selection {
  has(fileId: string): boolean;
  toggle(fileId: string): void;
}

/** Cover, drafting images and documents of a portfolio that already exists. */
export function FileManager({ detail }: { detail: PortfolioDetail }) {
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const allIds = new Set(
    SLOTS.flatMap((spec) => filesIn(detail, spec.slot).map((file) => fileIdOf(file) ?? '')),
  );
  // Files deleted meanwhile drop out of the selection.
  const selectedIds = [...selected].filter((fileId) => allIds.has(fileId));
  const selection: Selection = {
    has: (fileId) => selected.has(fileId),
    toggle: (fileId) =>
      setSelected((current) => {
        const next = new Set(current);
        if (!next.delete(fileId)) next.add(fileId);
        return next;
      }),
  };
  return (
    <section id="files" className="file-manager" aria-labelledby="files-heading">
      <h2 id="files-heading">Files</h2>
      <DescribeSelected
        detail={detail}
        fileIds={selectedIds}
        onDone={() => setSelected(new Set())}
      />
      {SLOTS.map((spec) => (
        <FileSlotSection key={spec.slot} detail={detail} spec={spec} selection={selection} />
      ))}
    </section>
  );
}

function FileSlotSection({
  detail,
  spec,
  selection,
}: {
  detail: PortfolioDetail;
  spec: SlotSpec;
  selection: Selection;
}) {
  const { uploads, start, dismiss } = useUploads(detail.portfolioId, spec.slot);
  const [dragging, setDragging] = useState(false);
  const headingId = useId();
  const hintId = useId();
  const drafting = useDraftingOrder(detail);
  const ordered = spec.slot === 'draftingProcess';
  const files = ordered ? drafting.files : filesIn(detail, spec.slot);
  const listRef = useRef<HTMLUListElement>(null);
  /** The control that moved a file: focus stays on it (or its twin) after the list re-renders. */
  const moving = useRef<{ fileId: string; control: string } | null>(null);

  useLayoutEffect(() => {
    const target = moving.current;
    if (!target || !listRef.current) return;
    moving.current = null;
    const row = listRef.current.querySelector<HTMLElement>(`[data-file-id="${target.fileId}"]`);
    const control =
      row?.querySelector<HTMLButtonElement>(`[data-move="${target.control}"]:not(:disabled)`) ??
      row?.querySelector<HTMLButtonElement>('[data-move]:not(:disabled)');
    if (control && document.activeElement !== control) control.focus();
  });

  function moveFile(fileId: string, to: number, control: string) {
    moving.current = { fileId, control };
    drafting.move(fileId, to);
  }

  function take(list: FileList | null) {
    const chosen = Array.from(list ?? []);
    if (chosen.length > 0) start(spec.multiple ? chosen : chosen.slice(0, 1));
  }

  function onDrop(event: DragEvent<HTMLDivElement>) {
    event.preventDefault();
    setDragging(false);
    take(event.dataTransfer.files);
  }

  return (
    <section className="file-slot card" aria-labelledby={headingId}>
      <h3 id={headingId}>{spec.title}</h3>
      <div
        className={`drop-zone ${dragging ? 'drop-zone--active' : ''}`}
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
      >
        <p id={hintId}>
          Drop {spec.multiple ? 'files' : 'an image'} here, or{' '}
          <label className="file-picker">
            <input
              type="file"
              className="visually-hidden"
              accept={spec.accept}
              multiple={spec.multiple}
              aria-describedby={hintId}
              onChange={(event) => {
                take(event.target.files);
                event.target.value = '';
              }}
            />
            <span className="button button--small">{spec.addLabel}</span>
          </label>
        </p>
        <p className="field-hint">{spec.hint}</p>
      </div>

      {uploads.length > 0 && (
        <ul className="upload-list" aria-label={`Uploads to ${spec.title}`}>
          {uploads.map((upload) => (
            <UploadRow key={upload.id} upload={upload} onDismiss={() => dismiss(upload.id)} />
          ))}
        </ul>
      )}

      {files.length === 0 ? (
        <p className="muted">{spec.slot === 'cover' ? 'No cover yet.' : 'None yet.'}</p>
      ) : (
        <ul ref={listRef} className="file-list" aria-label={`${spec.title} files`}>
          {files.map((file, index) => (
            <ExistingFileRow
              key={fileIdOf(file)}
              detail={detail}
              file={file}
              selection={selection}
              order={
                ordered
                  ? {
                      index,
                      count: files.length,
                      move: (to, control) => moveFile(fileIdOf(file) ?? '', to, control),
                      moveHere: (draggedId) => drafting.move(draggedId, index),
                    }
                  : undefined
              }
            />
          ))}
        </ul>
      )}
      {ordered && (
        <p className="visually-hidden" aria-live="polite" role="status">
          {drafting.announcement}
        </p>
      )}
      {ordered && files.length > 1 && (
        <p className="field-hint">
          To change the order, drag an image by its handle, use Move up and Move down, or press Alt
          with the up or down arrow key on an image.
        </p>
      )}
    </section>
  );
}

function UploadRow({ upload, onDismiss }: { upload: PendingUpload; onDismiss(): void }) {
  const percent = Math.round(upload.progress * 100);
  return (
    <li className={`upload-row ${upload.error ? 'upload-row--failed' : ''}`}>
      {upload.previewUrl ? (
        <img className="upload-preview" src={upload.previewUrl} alt="" />
      ) : (
        <span className="file-icon" aria-hidden="true">
          FILE
        </span>
      )}
      <div className="upload-text">
        <span className="document-name">{upload.name}</span>
        {upload.error ? (
          <span className="field-error" role="alert">
            {upload.error}
          </span>
        ) : (
          <>
            <progress max={100} value={percent} aria-label={`Uploading ${upload.name}`} />
            <span className="muted">
              {percent}% of {formatBytes(upload.size)}
            </span>
          </>
        )}
      </div>
      {upload.error && (
        <button
          type="button"
          className="button button--small"
          onClick={onDismiss}
          aria-label={`Dismiss ${upload.name}`}
        >
          Dismiss
        </button>
      )}
    </li>
  );
}

/** A drafting image's place in the list, and how to move it. */
interface RowOrder {
  index: number;
  count: number;
  move(to: number, control: 'up' | 'down'): void;
  /** Puts another (dragged) drafting image at this row's place. */
  moveHere(draggedId: string): void;
}

function ExistingFileRow({
  detail,
  file,
  selection,
  order,
}: {
  detail: PortfolioDetail;
  file: FileObject;
  selection: Selection;
  order: RowOrder | undefined;
}) {
  const portfolioId = detail.portfolioId;
  const fileId = fileIdOf(file) ?? '';
  const [dropTarget, setDropTarget] = useState(false);
  const name = file.originalFilename ?? 'file';
  const queryClient = useQueryClient();
  const toast = useToast();
  const [description, setDescription] = useState(file.description ?? '');
  // A description saved elsewhere (several files described at once) shows here too.
  const [savedDescription, setSavedDescription] = useState(file.description ?? '');
  if ((file.description ?? '') !== savedDescription) {
    setSavedDescription(file.description ?? '');
    setDescription(file.description ?? '');
  }
  const [confirming, setConfirming] = useState(false);
  const descriptionId = useId();

  const refresh = () =>
    queryClient.invalidateQueries({ queryKey: queryKeys.portfolio(portfolioId) });
  const saveDescription = useMutation({
    mutationFn: () => updateFileDescription(portfolioId, fileId, description),
    onSuccess: () => {
      toast.success(`Description of ${name} saved.`);
      return refresh();
    },
    onError: (error) => toast.error(`The description was not saved. ${describeError(error)}`),
  });
  const remove = useMutation({
    mutationFn: () => deleteFile(portfolioId, fileId),
    onSuccess: () => {
      toast.success(`${name} was deleted.`);
      setConfirming(false);
      void queryClient.invalidateQueries({ queryKey: queryKeys.portfolios, refetchType: 'none' });
      return refresh();
    },
    onError: (error) => {
      setConfirming(false);
      toast.error(`${name} was not deleted. ${describeError(error)}`);
    },
  });

  const toCover = useMutation({
    mutationFn: () => makeCover(portfolioId, fileId, detail.revision),
    onSuccess: () => {
      toast.success(
        detail.cover?.fileId
          ? `${name} is the cover now; the old cover is back among the drafting images.`
          : `${name} is the cover now.`,
      );
      void queryClient.invalidateQueries({ queryKey: queryKeys.portfolios, refetchType: 'none' });
      return refresh();
    },
    onError: (error) => toast.error(`${name} was not made the cover. ${describeError(error)}`),
  });

  function onKeyDown(event: KeyboardEvent<HTMLLIElement>) {
    if (!order || !event.altKey) return;
    if (event.key === 'ArrowUp' || event.key === 'ArrowDown') {
      event.preventDefault();
      const up = event.key === 'ArrowUp';
      order.move(order.index + (up ? -1 : 1), up ? 'up' : 'down');
    }
  }

  const dropHandlers = order && {
    onDragOver(event: DragEvent<HTMLLIElement>) {
      if (!event.dataTransfer.types.includes(DRAG_TYPE)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = 'move';
      setDropTarget(true);
    },
    onDragLeave: () => setDropTarget(false),
    onDrop(event: DragEvent<HTMLLIElement>) {
      setDropTarget(false);
      const dragged = event.dataTransfer.getData(DRAG_TYPE);
      if (!dragged) return;
      event.preventDefault();
      if (dragged !== fileId) order.moveHere(dragged);
    },
  };

  const changed = description !== (file.description ?? '');
  const tooLong = description.length > LIMITS.fileDescription;
  const counterId = `${descriptionId}-counter`;
  const errorId = `${descriptionId}-error`;
  const image = isRasterImage(file.mimeType);
  return (
    <li
      className={`file-row ${dropTarget ? 'file-row--drop' : ''}`}
      data-file-id={fileId}
      onKeyDown={onKeyDown}
      {...dropHandlers}
    >
      {order && (
        <span
          className="drag-handle"
          draggable
          aria-hidden="true"
          title="Drag to change the order"
          onDragStart={(event) => {
            event.dataTransfer.setData(DRAG_TYPE, fileId);
            event.dataTransfer.effectAllowed = 'move';
          }}
        >
          ⠿
        </span>
      )}
      <label className="file-select">
        <input
          type="checkbox"
          checked={selection.has(fileId)}
          onChange={() => selection.toggle(fileId)}
        />
        <span className="visually-hidden">Select {name}</span>
      </label>
      {image ? (
        <AuthedImage
          portfolioId={portfolioId}
          fileId={fileId}
          width={96}
          alt={name}
          className="file-thumb"
        />
      ) : (
        <span className="file-icon" aria-hidden="true">
          {fileKindLabel(file.fullFileExtension, file.mimeType)}
        </span>
      )}
      <div className="file-text">
        <span className="document-name">{name}</span>
        <span className="muted">{formatBytes(file.size)}</span>
        <form
          className="description-form"
          onSubmit={(event) => {
            event.preventDefault();
            if (!tooLong) saveDescription.mutate();
          }}
        >
          <label htmlFor={descriptionId} className="field-label">
            Description of {name}
          </label>
          <div className="inline-input">
            <input
              id={descriptionId}
              value={description}
              onChange={(event) => setDescription(event.target.value)}
              aria-invalid={tooLong ? true : undefined}
              aria-describedby={tooLong ? `${counterId} ${errorId}` : counterId}
            />
            <button
              type="submit"
              className="button button--small"
              disabled={!changed || tooLong || saveDescription.isPending}
            >
              Save description
            </button>
          </div>
          <p className={`field-counter ${tooLong ? 'field-counter--over' : ''}`} id={counterId}>
            {characterCount(description.length, LIMITS.fileDescription)}
          </p>
          {tooLong && (
            <p className="field-error" id={errorId}>
              {tooLongMessage('A description', description.length, LIMITS.fileDescription)}
            </p>
          )}
        </form>
      </div>
      <div className="file-actions">
        {order && (
          <>
            <span className="muted file-position">
              {order.index + 1} of {order.count}
            </span>
            <button
              type="button"
              className="button button--small"
              data-move="up"
              onClick={() => order.move(order.index - 1, 'up')}
              disabled={order.index === 0}
              aria-label={`Move ${name} up`}
            >
              Move up
            </button>
            <button
              type="button"
              className="button button--small"
              data-move="down"
              onClick={() => order.move(order.index + 1, 'down')}
              disabled={order.index === order.count - 1}
              aria-label={`Move ${name} down`}
            >
              Move down
            </button>
            {image && (
              <button
                type="button"
                className="button button--small"
                onClick={() => toCover.mutate()}
                disabled={toCover.isPending}
                aria-label={`Make ${name} the cover`}
              >
                Make cover
              </button>
            )}
          </>
        )}
        <DownloadButton portfolioId={portfolioId} fileId={fileId} filename={name} />
        <button
          type="button"
          className="button button--small button--danger"
          onClick={() => setConfirming(true)}
          aria-label={`Delete ${name}`}
        >
          Delete
        </button>
      </div>
      <ConfirmDialog
        open={confirming}
        title={`Delete ${name}?`}
        confirmLabel="Delete file"
        danger
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
        onCancel={() => setConfirming(false)}
      >
        <p>The file is removed from this portfolio for everyone. This cannot be undone.</p>
      </ConfirmDialog>
    </li>
  );
}
