import type { PortfolioDetail } from '../../../shared';
import { type FileObject, fileIdOf } from '../api/portfolio-api';
import { AuthedImage } from '../components/AuthedImage';
import { SanitizedHtml } from '../components/SanitizedHtml';
import { fileKindLabel, formatBytes, isRasterImage } from '../lib/format';
import type { FieldKind } from './revision-diff';

interface RevisionValueProps {
  portfolioId: string;
  kind: FieldKind;
  value: PortfolioDetail[keyof PortfolioDetail];
  /**
   * Files the server serves thumbnails of: those of the current revision. A file only an older
   * revision has is shown by name until it is restored.
   */
  servedFileIds: ReadonlySet<string>;
}

/** One field of one revision, as a person reads it; files by name and thumbnail, never bytes. */
export function RevisionValue({ portfolioId, kind, value, servedFileIds }: RevisionValueProps) {
  switch (kind) {
    case 'flag':
      return <span>{value ? 'Yes' : 'No'}</span>;
    case 'tags': {
      const tags = (value as string[] | undefined) ?? [];
      if (tags.length === 0) return <Empty />;
      return (
        <ul className="tag-list">
          {tags.map((tag) => (
            <li key={tag} className="tag">
              {tag}
            </li>
          ))}
        </ul>
      );
    }
    case 'html':
      return value ? <SanitizedHtml html={value as string} className="compare-html" /> : <Empty />;
    case 'cover':
      return value ? (
        <FileList
          portfolioId={portfolioId}
          files={[value as FileObject]}
          servedFileIds={servedFileIds}
        />
      ) : (
        <Empty text="No cover" />
      );
    case 'files': {
      const files = (value as FileObject[] | undefined) ?? [];
      return files.length ? (
        <FileList portfolioId={portfolioId} files={files} servedFileIds={servedFileIds} />
      ) : (
        <Empty text="No files" />
      );
    }
    default:
      return value ? <p className="prose compare-text">{String(value)}</p> : <Empty />;
  }
}

function Empty({ text = 'Empty' }: { text?: string }) {
  return <span className="muted">({text.toLowerCase()})</span>;
}

function FileList({
  portfolioId,
  files,
  servedFileIds,
}: {
  portfolioId: string;
  files: FileObject[];
  servedFileIds: ReadonlySet<string>;
}) {
  return (
    <ul className="compare-files">
      {files.map((file, index) => {
        const fileId = fileIdOf(file);
        const name = file.originalFilename ?? `File ${index + 1}`;
        const served = fileId !== undefined && servedFileIds.has(fileId);
        return (
          <li key={fileId ?? index} className="compare-file">
            {served && isRasterImage(file.mimeType) ? (
              <AuthedImage
                portfolioId={portfolioId}
                fileId={fileId}
                width={64}
                alt={name}
                className="compare-thumb"
              />
            ) : (
              <span className="file-icon" aria-hidden="true">
                {fileKindLabel(file.fullFileExtension, file.mimeType)}
              </span>
            )}
            <span className="compare-file-text">
              <span className="document-name">{name}</span>
              <span className="muted">
                {formatBytes(file.size)}
                {file.description ? ` · ${file.description}` : ''}
              </span>
              {!served && <span className="muted compare-note">Not in the current version</span>}
            </span>
          </li>
        );
      })}
    </ul>
  );
}
