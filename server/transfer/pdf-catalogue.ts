import { once } from 'node:events';
import type { Readable } from 'node:stream';
import PDFDocument from 'pdfkit';
import { PORTFOLIO_FIELDS, type PortfolioRecord } from '../../shared';
import { publicPortfolio, type PublicImage } from '../domain/public-portfolio';
import { plainTextOf } from '../domain/sanitize-html';
import { loadSharp } from '../media/load-sharp';

export interface CatalogueOptions {
  /** The chosen portfolio ids, read first: the cover page tells how many. */
  ids: () => Promise<string[]>;
  /** One portfolio as stored now, or undefined when it went since. */
  get: (portfolioId: string) => Promise<PortfolioRecord | undefined>;
  /** An image blob's bytes. */
  blob: (sha256: string) => Readable;
  title: string;
  now: number;
}

/** A4 in points, with 2 cm margins. */
const MARGIN = 56;
const PAGE = { width: 595.28, height: 841.89 };
const CONTENT_WIDTH = PAGE.width - 2 * MARGIN;
/** Images go in at print size: 150 dpi across the text column. */
const PRINT_PIXELS = Math.round((CONTENT_WIDTH / 72) * 150);
/** The stream is let to hold this much before the next portfolio is drawn (bounded memory). */
const HIGH_WATER_BYTES = 4 * 1024 * 1024;

/** An image as a JPEG at print size (pdfkit embeds JPEG and PNG only), or null if unreadable. */
async function printJpeg(blob: Readable, maxHeight: number): Promise<Buffer | null> {
  const sharp = loadSharp();
  const pipeline = sharp({ failOn: 'none' })
    .rotate()
    .resize({
      width: PRINT_PIXELS,
      height: Math.round((maxHeight / 72) * 150),
      fit: 'inside',
      withoutEnlargement: true,
    })
    .flatten({ background: '#ffffff' })
    .jpeg({ quality: 80 });
  blob.pipe(pipeline);
  return pipeline.toBuffer().catch(() => null);
}

/**
 * The printable catalogue (DESIGN §15): a cover page (title, date, count), then each portfolio
 * on its own page (more when its texts run on): cover image, title, category, its public texts
 * as plain text, certificates and drafting images. Written as a stream, one portfolio at a time,
 * waiting while the reader is behind, so memory does not grow with the catalogue.
 */
export function pdfCatalogue(options: CatalogueOptions): Readable {
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    autoFirstPage: false,
    info: { Title: options.title, Creator: 'Portfolio Manager' },
  });
  void (async () => {
    const ids = await options.ids();
    coverPage(doc, options.title, options.now, ids.length);
    for (const id of ids) {
      const record = await options.get(id);
      if (!record) continue;
      await portfolioPages(doc, record, options.blob);
      while (doc.readableLength > HIGH_WATER_BYTES && !doc.destroyed) await once(doc, 'data');
    }
    doc.end();
  })().catch((error: unknown) => doc.destroy(error as Error));
  return doc;
}

function coverPage(doc: PDFKit.PDFDocument, title: string, now: number, count: number): void {
  doc.addPage();
  doc.moveDown(10).font('Helvetica-Bold').fontSize(30).text(title, { align: 'center' });
  const date = new Date(now).toLocaleDateString('en-GB', {
    day: 'numeric',
    month: 'long',
    year: 'numeric',
  });
  doc.moveDown(1).font('Helvetica').fontSize(14).text(date, { align: 'center' });
  doc.moveDown(0.5).text(count === 1 ? '1 portfolio' : `${count} portfolios`, { align: 'center' });
}

async function portfolioPages(
  doc: PDFKit.PDFDocument,
  record: PortfolioRecord,
  blob: (sha256: string) => Readable,
): Promise<void> {
  doc.addPage();
  const view = publicPortfolio(record);
  if (view.cover) await image(doc, view.cover, blob, 300);
  doc.font('Helvetica-Bold').fontSize(20).text(view.projectTitle);
  doc.moveDown(0.2).font('Helvetica').fontSize(11).fillColor('#444444');
  doc.text(record.category).fillColor('#000000').moveDown(0.8);
  for (const field of view.fields) {
    if (field.key === 'category') continue;
    const value =
      field.kind === 'tags'
        ? field.value.join(', ')
        : field.kind === 'html'
          ? plainTextOf(field.value)
          : field.kind === 'flag'
            ? 'Yes'
            : field.value;
    if (!value) continue;
    doc.font('Helvetica-Bold').fontSize(10).text(PORTFOLIO_FIELDS[field.key].label);
    doc.font('Helvetica').fontSize(10).text(value).moveDown(0.6);
  }
  if (view.drafting.length > 0) {
    doc.moveDown(0.4).font('Helvetica-Bold').fontSize(12).text('Drafting process').moveDown(0.3);
    for (const drafting of view.drafting) await image(doc, drafting, blob, 220);
  }
}

/** Draws an image across the column, on a new page when it does not fit the rest of this one. */
async function image(
  doc: PDFKit.PDFDocument,
  picture: PublicImage,
  blob: (sha256: string) => Readable,
  maxHeight: number,
): Promise<void> {
  const jpeg = await printJpeg(blob(picture.sha256), maxHeight);
  if (!jpeg) return;
  const ratio = picture.width && picture.height ? picture.height / picture.width : 0.75;
  const height = Math.min(maxHeight, CONTENT_WIDTH * ratio);
  if (doc.y + height > PAGE.height - MARGIN) doc.addPage();
  doc.image(jpeg, { fit: [CONTENT_WIDTH, height], align: 'center' });
  doc.y += height + 8;
  doc.x = MARGIN;
  if (picture.description)
    doc.font('Helvetica').fontSize(9).text(picture.description).moveDown(0.5);
}
