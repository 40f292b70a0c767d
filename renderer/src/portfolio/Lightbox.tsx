import { type KeyboardEvent, type PointerEvent, useEffect, useRef, useState } from 'react';
import { type FileObject, fileIdOf } from '../api/portfolio-api';
import { useFileUrl } from '../components/use-file-url';
import { useModalDialog } from '../components/use-modal-dialog';
import { isRasterImage } from '../lib/format';
import { DownloadButton } from './DownloadButton';

interface LightboxProps {
  portfolioId: string;
  images: FileObject[];
  index: number | null;
  onIndexChange(index: number | null): void;
}

const MIN_ZOOM = 1;
const MAX_ZOOM = 8;
const ZOOM_STEP = 1.5;
/** How far one arrow key pans a zoomed image, in CSS pixels. */
const PAN_STEP = 60;

interface View {
  zoom: number;
  x: number;
  y: number;
}
const FIT: View = { zoom: 1, x: 0, y: 0 };

const clampZoom = (zoom: number) => Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, zoom));

/**
 * Drafting images one at a time. Arrow keys browse (or pan, when zoomed); +, - and 0 zoom in,
 * out and back to fit, as do the buttons, the mouse wheel and a pinch; a zoomed image is dragged
 * to pan. Escape closes. The large thumbnail shows first; the original file is fetched the
 * first time the image is zoomed, so its full detail is there when it matters.
 */
export function Lightbox({ portfolioId, images, index, onIndexChange }: LightboxProps) {
  const open = index !== null;
  const ref = useModalDialog(open);
  const [view, setView] = useState<View>(FIT);
  const [wantFull, setWantFull] = useState(false);
  const viewport = useRef<HTMLDivElement>(null);
  const pointers = useRef(new Map<number, { x: number; y: number }>());
  const pinch = useRef<{ distance: number; zoom: number } | null>(null);

  const image = index === null ? undefined : images[index];
  const fileId = image ? fileIdOf(image) : undefined;
  const raster = isRasterImage(image?.mimeType);
  const thumbnail = useFileUrl(portfolioId, fileId, 1024, open && raster);
  const full = useFileUrl(portfolioId, fileId, 'full', open && raster && wantFull);
  const source = full.data ?? thumbnail.data;

  // Each image starts fitted, from its thumbnail.
  const [shown, setShown] = useState(fileId);
  if (shown !== fileId) {
    setShown(fileId);
    setView(FIT);
    setWantFull(false);
  }

  const zoomTo = (zoom: number) => {
    const next = clampZoom(zoom);
    if (next > 1) setWantFull(true);
    setView((current) =>
      next === 1
        ? FIT
        : {
            zoom: next,
            x: current.x * (next / current.zoom),
            y: current.y * (next / current.zoom),
          },
    );
  };
  const zoomBy = (factor: number) => zoomTo(view.zoom * factor);
  const pan = (dx: number, dy: number) =>
    setView((current) =>
      current.zoom === 1 ? current : { ...current, x: current.x + dx, y: current.y + dy },
    );

  // The wheel zooms; React's wheel listener is passive, so the page would scroll as well.
  useEffect(() => {
    const element = viewport.current;
    if (!element || !open) return;
    const onWheel = (event: WheelEvent) => {
      event.preventDefault();
      const factor = Math.exp(-event.deltaY / 300);
      setView((current) => {
        const zoom = clampZoom(current.zoom * factor);
        if (zoom > 1) setWantFull(true);
        return zoom === 1 ? FIT : { ...current, zoom };
      });
    };
    element.addEventListener('wheel', onWheel, { passive: false });
    return () => element.removeEventListener('wheel', onWheel);
  }, [open, fileId]);

  const step = (delta: number) => {
    if (index === null || images.length === 0) return;
    onIndexChange((index + delta + images.length) % images.length);
  };

  function onKeyDown(event: KeyboardEvent<HTMLDialogElement>) {
    const zoomed = view.zoom > 1;
    const keys: Record<string, () => void> = {
      '+': () => zoomBy(ZOOM_STEP),
      '=': () => zoomBy(ZOOM_STEP),
      '-': () => zoomBy(1 / ZOOM_STEP),
      _: () => zoomBy(1 / ZOOM_STEP),
      '0': () => zoomTo(1),
      ArrowRight: () => (zoomed ? pan(-PAN_STEP, 0) : step(1)),
      ArrowLeft: () => (zoomed ? pan(PAN_STEP, 0) : step(-1)),
      ArrowUp: () => zoomed && pan(0, PAN_STEP),
      ArrowDown: () => zoomed && pan(0, -PAN_STEP),
    };
    const action = keys[event.key];
    if (!action || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    action();
  }

  function onPointerDown(event: PointerEvent<HTMLDivElement>) {
    event.currentTarget.setPointerCapture(event.pointerId);
    pointers.current.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pointers.current.size === 2) {
      const [a, b] = [...pointers.current.values()] as [
        { x: number; y: number },
        { x: number; y: number },
      ];
      pinch.current = { distance: Math.hypot(a.x - b.x, a.y - b.y), zoom: view.zoom };
    }
  }
  function onPointerMove(event: PointerEvent<HTMLDivElement>) {
    const last = pointers.current.get(event.pointerId);
    if (!last) return;
    pointers.current.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pointers.current.size === 2 && pinch.current) {
      const [a, b] = [...pointers.current.values()] as [
        { x: number; y: number },
        { x: number; y: number },
      ];
      const distance = Math.hypot(a.x - b.x, a.y - b.y);
      zoomTo(pinch.current.zoom * (distance / Math.max(1, pinch.current.distance)));
    } else if (pointers.current.size === 1) {
      pan(event.clientX - last.x, event.clientY - last.y);
    }
  }
  function onPointerUp(event: PointerEvent<HTMLDivElement>) {
    pointers.current.delete(event.pointerId);
    if (pointers.current.size < 2) pinch.current = null;
  }

  const name = image?.description || image?.originalFilename || 'Drafting image';
  const percent = Math.round(view.zoom * 100);

  return (
    <dialog
      ref={ref}
      className="lightbox"
      aria-label="Drafting process image"
      onCancel={(event) => {
        event.preventDefault();
        onIndexChange(null);
      }}
      onKeyDown={onKeyDown}
    >
      {image && index !== null && (
        <figure>
          <div
            ref={viewport}
            className={`lightbox-image ${view.zoom > 1 ? 'lightbox-image--zoomed' : ''}`}
            onPointerDown={onPointerDown}
            onPointerMove={onPointerMove}
            onPointerUp={onPointerUp}
            onPointerCancel={onPointerUp}
            onDoubleClick={() => zoomTo(view.zoom > 1 ? 1 : 2)}
          >
            {!raster ? (
              <p className="lightbox-note">This file is not an image; download it to open it.</p>
            ) : source ? (
              <img
                src={source}
                alt={name}
                draggable={false}
                data-full={full.data ? 'true' : 'false'}
                style={{
                  transform: `translate(${view.x}px, ${view.y}px) scale(${view.zoom})`,
                }}
              />
            ) : thumbnail.isError ? (
              <p className="lightbox-note">The image could not be loaded.</p>
            ) : (
              <div className="skeleton image-skeleton" aria-hidden="true" />
            )}
          </div>
          <figcaption>
            {name}{' '}
            <span className="muted">
              ({index + 1} of {images.length})
            </span>
          </figcaption>
          <div className="button-row lightbox-controls">
            {raster && (
              <div className="button-row lightbox-zoom" role="group" aria-label="Zoom">
                <button
                  type="button"
                  className="button button--small"
                  onClick={() => zoomBy(1 / ZOOM_STEP)}
                  disabled={view.zoom <= MIN_ZOOM}
                  aria-keyshortcuts="-"
                >
                  Zoom out
                </button>
                <output className="lightbox-percent" aria-live="polite" aria-label="Zoom level">
                  {percent}%
                </output>
                <button
                  type="button"
                  className="button button--small"
                  onClick={() => zoomBy(ZOOM_STEP)}
                  disabled={view.zoom >= MAX_ZOOM}
                  aria-keyshortcuts="+"
                >
                  Zoom in
                </button>
                <button
                  type="button"
                  className="button button--small"
                  onClick={() => zoomTo(1)}
                  disabled={view.zoom === 1}
                  aria-keyshortcuts="0"
                >
                  Fit to screen
                </button>
              </div>
            )}
            <DownloadButton
              portfolioId={portfolioId}
              fileId={fileId ?? ''}
              filename={image.originalFilename ?? 'file'}
            />
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
          <p className="field-hint lightbox-hint">
            Zoom with + and −, the mouse wheel or two fingers; 0 fits the image again. Drag or use
            the arrow keys to move around a zoomed image.
          </p>
        </figure>
      )}
    </dialog>
  );
}
