import { useState } from 'react';
import { useFileUrl } from './use-file-url';
import { useInView } from './use-in-view';
import { THUMBNAIL_WIDTHS } from '../../../shared';

interface AuthedImageProps {
  portfolioId: string;
  fileId: string | undefined;
  /** Thumbnail width in CSS pixels (doubled for sharp screens), or the original file. */
  width: number | 'full';
  alt: string;
  className?: string;
}

/**
 * The thumbnail sizes the server renders and caches (server/media/thumbnails.ts); asking for
 * another width is a 400. Pick the smallest that covers the box on this screen.
 */
const LARGEST_THUMBNAIL = 1024;

export function thumbnailWidthFor(
  cssWidth: number,
  pixelRatio = window.devicePixelRatio || 1,
): number {
  const needed = cssWidth * Math.min(2, pixelRatio);
  return THUMBNAIL_WIDTHS.find((width) => width >= needed) ?? LARGEST_THUMBNAIL;
}

/** An image from the API, loaded only once it nears the viewport; a placeholder otherwise. */
export function AuthedImage({ portfolioId, fileId, width, alt, className }: AuthedImageProps) {
  const [frame, setFrame] = useState<HTMLDivElement | null>(null);
  const visible = useInView(frame);
  const pixelWidth = width === 'full' ? 'full' : thumbnailWidthFor(width);
  const image = useFileUrl(portfolioId, fileId, pixelWidth, visible);

  return (
    <div ref={setFrame} className={`image-frame ${className ?? ''}`}>
      {!fileId ? (
        <div className="image-placeholder" role="img" aria-label={`${alt}: no image`}>
          <span aria-hidden="true">No cover</span>
        </div>
      ) : image.data ? (
        <img src={image.data} alt={alt} decoding="async" />
      ) : image.isError ? (
        <div className="image-placeholder" role="img" aria-label={`${alt}: could not be loaded`}>
          <span aria-hidden="true">Image unavailable</span>
        </div>
      ) : (
        <div className="skeleton image-skeleton" aria-hidden="true" />
      )}
    </div>
  );
}
