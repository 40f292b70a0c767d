import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type DragEvent, useId, useState } from 'react';
import { type FileSlot, type PortfolioDetail, LIMITS } from '../../../shared';
import { describeError } from '../api/api-error';
import { type FileObject, deleteFile, fileIdOf, updateFileDescription } from '../api/portfolio-api';
import { queryKeys } from '../api/query-keys';
import { AuthedImage } from '../components/AuthedImage';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { characterCount, tooLongMessage } from '../components/character-count';
import { useToast } from '../components/use-toast';
import { fileKindLabel, formatBytes, isRasterImage } from '../lib/format';
import { type PendingUpload, useUploads } from './use-uploads';

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

/** Cover, drafting images and documents of a portfolio that already exists. */
export function FileManager({ detail }: { detail: PortfolioDetail }) {
  return (
    <section id="files" className="file-manager" aria-labelledby="files-heading">
      <h2 id="files-heading">Files</h2>
      {SLOTS.map((spec) => (
        <FileSlotSection key={spec.slot} detail={detail} spec={spec} />
      ))}
    </section>
  );
}

function FileSlotSection({ detail, spec }: { detail: PortfolioDetail; spec: SlotSpec }) {
  const { uploads, start, dismiss } = useUploads(detail.portfolioId, spec.slot);
  const [dragging, setDragging] = useState(false);
  const headingId = useId();
  const hintId = useId();
  const files = filesIn(detail, spec.slot);

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
        <ul className="file-list" aria-label={`${spec.title} files`}>
          {files.map((file) => (
            <ExistingFileRow key={fileIdOf(file)} portfolioId={detail.portfolioId} file={file} />
          ))}
        </ul>
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

function ExistingFileRow({ portfolioId, file }: { portfolioId: string; file: FileObject }) {
  const fileId = fileIdOf(file) ?? '';
  const name = file.originalFilename ?? 'file';
  const queryClient = useQueryClient();
  const toast = useToast();
  const [description, setDescription] = useState(file.description ?? '');
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

  const changed = description !== (file.description ?? '');
  const tooLong = description.length > LIMITS.fileDescription;
  const counterId = `${descriptionId}-counter`;
  const errorId = `${descriptionId}-error`;
  return (
    <li className="file-row">
      {isRasterImage(file.mimeType) ? (
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
      <button
        type="button"
        className="button button--small button--danger"
        onClick={() => setConfirming(true)}
        aria-label={`Delete ${name}`}
      >
        Delete
      </button>
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
