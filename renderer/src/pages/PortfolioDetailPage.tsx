import { useState } from 'react';
import { Link, useParams } from 'react-router';
import type { PortfolioDetail } from '../../../shared';
import { ApiError, describeError } from '../api/api-error';
import { fileIdOf } from '../api/portfolio-api';
import { AuthedImage } from '../components/AuthedImage';
import { SanitizedHtml } from '../components/SanitizedHtml';
import { useDocumentTitle } from '../components/use-document-title';
import { fileKindLabel, formatBytes, formatDate, isRasterImage } from '../lib/format';
import { paths } from '../paths';
import { AdminActions } from '../portfolio/AdminActions';
import { DownloadButton } from '../portfolio/DownloadButton';
import { DeletePortfolioButton } from '../history/DeletePortfolioButton';
import { HistoryPanel } from '../history/HistoryPanel';
import { FileDetails } from '../portfolio/FileDetails';
import { Lightbox } from '../portfolio/Lightbox';
import { SharePanel } from '../portfolio/SharePanel';
import { StatusBadges } from '../portfolio/StatusBadges';
import { usePortfolio } from '../portfolio/use-portfolio';
import { canEditCategory, isAdmin, isStaff } from '../session/permissions';
import { useUser } from '../session/use-session';
import { ConflictPanel } from '../sync/ConflictPanel';

export function PortfolioDetailPage() {
  const { portfolioId = '' } = useParams();
  const portfolio = usePortfolio(portfolioId);
  useDocumentTitle(portfolio.data?.projectTitle ?? 'Portfolio');

  if (portfolio.isPending) return <DetailSkeleton />;
  if (portfolio.isError) {
    const missing = portfolio.error instanceof ApiError && portfolio.error.status === 404;
    return (
      <div className="page">
        <BackLink />
        <div className="empty-state" role="alert">
          <h1>{missing ? 'Portfolio not found' : 'The portfolio could not be loaded'}</h1>
          <p>
            {missing
              ? 'It may have been removed, or it is not published.'
              : describeError(portfolio.error)}
          </p>
        </div>
      </div>
    );
  }
  return <PortfolioView detail={portfolio.data} />;
}

function BackLink() {
  return (
    <p className="back-link">
      <Link to={paths.gallery()}>← Gallery</Link>
    </p>
  );
}

function PortfolioView({ detail }: { detail: PortfolioDetail }) {
  const user = useUser();
  const [lightboxIndex, setLightboxIndex] = useState<number | null>(null);
  const images = detail.draftingProcess;
  const title = detail.projectTitle;
  const mayEdit = canEditCategory(user, detail.category);

  return (
    <article className="page detail-page">
      <BackLink />
      <header className="detail-header">
        <div>
          <h1>{title}</h1>
          <p className="card-meta">
            <span>{detail.category}</span>
            <span className="mono">#{detail.memberBarcode}</span>
          </p>
          <StatusBadges
            published={detail.published}
            active={detail.active}
            staffPick={detail.staffPick}
          />
        </div>
        {mayEdit && (
          <div className="button-row">
            <Link to={paths.editPortfolio(detail.portfolioId)} className="button button--primary">
              Edit
            </Link>
            <DeletePortfolioButton detail={detail} />
          </div>
        )}
      </header>

      {isAdmin(user) && <AdminActions detail={detail} />}
      {isStaff(user) && <ConflictPanel detail={detail} canResolve={mayEdit} />}
      {mayEdit && <SharePanel portfolioId={detail.portfolioId} title={title} />}

      <div className="detail-layout">
        <div className="detail-main">
          <figure className="detail-cover">
            <AuthedImage
              portfolioId={detail.portfolioId}
              fileId={detail.cover?.fileId}
              width={960}
              alt={`Cover of ${title}`}
            />
            {detail.cover?.description && <figcaption>{detail.cover.description}</figcaption>}
            {detail.cover?.fileId && (
              <div className="file-meta-row">
                <FileDetails file={detail.cover} />
                <DownloadButton
                  portfolioId={detail.portfolioId}
                  fileId={detail.cover.fileId}
                  filename={detail.cover.originalFilename ?? 'cover'}
                />
              </div>
            )}
          </figure>

          {detail.oboutProject && (
            <section aria-labelledby="about-heading">
              <h2 id="about-heading">About the project</h2>
              <p className="prose">{detail.oboutProject}</p>
            </section>
          )}
          <section aria-labelledby="detail-heading">
            <h2 id="detail-heading">Project detail</h2>
            <p className="prose">{detail.projectDetail}</p>
          </section>

          <section aria-labelledby="drafting-heading">
            <h2 id="drafting-heading">Drafting process</h2>
            {images.length === 0 ? (
              <p className="muted">No drafting images.</p>
            ) : (
              <ul className="thumb-grid">
                {images.map((file, index) => {
                  const name = file.description || file.originalFilename || `Image ${index + 1}`;
                  return (
                    <li key={fileIdOf(file) ?? index}>
                      <button
                        type="button"
                        className="thumb-button"
                        onClick={() => setLightboxIndex(index)}
                        aria-label={`Open ${name}`}
                      >
                        <AuthedImage
                          portfolioId={detail.portfolioId}
                          fileId={isRasterImage(file.mimeType) ? fileIdOf(file) : undefined}
                          width={200}
                          alt={name}
                        />
                      </button>
                      <span className="thumb-caption">{name}</span>
                      <div className="file-meta-row">
                        <FileDetails file={file} />
                        <DownloadButton
                          portfolioId={detail.portfolioId}
                          fileId={fileIdOf(file) ?? ''}
                          filename={file.originalFilename ?? `image-${index + 1}`}
                        />
                      </div>
                    </li>
                  );
                })}
              </ul>
            )}
          </section>

          <section aria-labelledby="documents-heading">
            <h2 id="documents-heading">Additional documents</h2>
            {detail.additionalDocument.length === 0 ? (
              <p className="muted">No documents.</p>
            ) : (
              <ul className="document-list">
                {detail.additionalDocument.map((file, index) => {
                  const fileId = fileIdOf(file) ?? '';
                  const name = file.originalFilename ?? `Document ${index + 1}`;
                  return (
                    <li key={fileId || index} className="document-row">
                      <span className="file-icon" aria-hidden="true">
                        {fileKindLabel(file.fullFileExtension, file.mimeType)}
                      </span>
                      <div className="document-text">
                        <span className="document-name">{name}</span>
                        <span className="muted">
                          {formatBytes(file.size)}
                          {file.description ? ` · ${file.description}` : ''}
                        </span>
                        <FileDetails file={file} />
                      </div>
                      <DownloadButton
                        portfolioId={detail.portfolioId}
                        fileId={fileId}
                        filename={name}
                      />
                    </li>
                  );
                })}
              </ul>
            )}
          </section>
        </div>

        <aside className="detail-aside card" aria-label="Details">
          <dl className="meta-list">
            <dt>Member barcode</dt>
            <dd className="mono">{detail.memberBarcode}</dd>
            <dt>Category</dt>
            <dd>{detail.category}</dd>
            <TagRow label="Related categories" tags={detail.relativeCategory} />
            {detail.readyToBuy && (
              <>
                <dt>Ready to buy</dt>
                <dd>{detail.readyToBuy}</dd>
              </>
            )}
            {detail.projectLanuching && (
              <>
                <dt>Project launching</dt>
                <dd>{detail.projectLanuching}</dd>
              </>
            )}
            <TagRow label="Occasion" tags={detail.occasion} />
            <TagRow label="Reference styling" tags={detail.referenceStyling} />
            <TagRow label="Tags" tags={detail.generalTag} />
            <dt>Created</dt>
            <dd>{formatDate(detail.createdDate)}</dd>
            <dt>Last changed</dt>
            <dd>{formatDate(detail.modifiedTime)}</dd>
            <dt>Revision</dt>
            <dd>{detail.revision}</dd>
          </dl>
          <section aria-labelledby="certificates-heading">
            <h2 id="certificates-heading">Certificates</h2>
            {detail.certificateByOrg.length > 0 ? (
              <ul className="tag-list">
                {detail.certificateByOrg.map((certificate) => (
                  <li key={certificate} className="tag">
                    {certificate}
                  </li>
                ))}
              </ul>
            ) : (
              <p className="muted">No certificates.</p>
            )}
            {detail.certificateDesc && (
              <SanitizedHtml html={detail.certificateDesc} label="Certificate description" />
            )}
          </section>
        </aside>
        {isStaff(user) && <HistoryPanel detail={detail} canRestore={mayEdit} />}
      </div>
      <Lightbox
        portfolioId={detail.portfolioId}
        images={images}
        index={lightboxIndex}
        onIndexChange={setLightboxIndex}
      />
    </article>
  );
}

function TagRow({ label, tags }: { label: string; tags: string[] }) {
  if (tags.length === 0) return null;
  return (
    <>
      <dt>{label}</dt>
      <dd>
        <ul className="tag-list">
          {tags.map((tag) => (
            <li key={tag} className="tag">
              {tag}
            </li>
          ))}
        </ul>
      </dd>
    </>
  );
}

function DetailSkeleton() {
  return (
    <div className="page detail-page" aria-busy="true" aria-label="Loading portfolio">
      <div className="skeleton skeleton-title" />
      <div className="detail-layout">
        <div className="skeleton detail-cover-skeleton" />
        <div className="skeleton detail-aside-skeleton" />
      </div>
    </div>
  );
}
