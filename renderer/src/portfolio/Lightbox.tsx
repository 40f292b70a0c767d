import { type FileObject, fileIdOf } from '../api/portfolio-api';
import { AuthedImage } from '../components/AuthedImage';
import { useModalDialog } from '../components/use-modal-dialog';

interface LightboxProps {
  portfolioId: string;
  images: FileObject[];
  index: number | null;
  onIndexChange(index: number | null): void;
}

/** Full-size drafting images one at a time; arrow keys browse, Escape closes. */
export function Lightbox({ portfolioId, images, index, onIndexChange }: LightboxProps) {
  const open = index !== null;
  const ref = useModalDialog(open);

  const image = index === null ? undefined : images[index];
  const step = (delta: number) => {
    if (index === null || images.length === 0) return;
    onIndexChange((index + delta + images.length) % images.length);
  };
  const name = image?.description || image?.originalFilename || 'Drafting image';

  return (
    <dialog
      ref={ref}
      className="lightbox"
      aria-label="Drafting process image"
      onCancel={(event) => {
        event.preventDefault();
        onIndexChange(null);
      }}
      onKeyDown={(event) => {
        if (event.key === 'ArrowRight') step(1);
        if (event.key === 'ArrowLeft') step(-1);
      }}
    >
      {image && index !== null && (
        <figure>
          <AuthedImage
            portfolioId={portfolioId}
            fileId={fileIdOf(image)}
            width="full"
            alt={name}
            className="lightbox-image"
          />
          <figcaption>
            {name}{' '}
            <span className="muted">
              ({index + 1} of {images.length})
            </span>
          </figcaption>
          <div className="button-row lightbox-controls">
            <button
              type="button"
              className="button"
              onClick={() => step(-1)}
              disabled={images.length < 2}
            >
              Previous
            </button>
            <button
              type="button"
              className="button"
              onClick={() => step(1)}
              disabled={images.length < 2}
            >
              Next
            </button>
            <button
              type="button"
              className="button button--primary"
              onClick={() => onIndexChange(null)}
              autoFocus
            >
              Close
            </button>
          </div>
        </figure>
      )}
    </dialog>
  );
}
