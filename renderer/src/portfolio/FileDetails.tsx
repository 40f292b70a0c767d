import { fileTypeName } from '../../../shared';
import type { FileObject } from '../api/portfolio-api';
import { formatBytes, formatDate } from '../lib/format';

/** A file's metadata, folded away until asked for. */
export function FileDetails({ file }: { file: FileObject }) {
  const dimension = file.dimention;
  return (
    <details className="file-details">
      <summary>File details</summary>
      <dl className="meta-list meta-list--compact">
        <dt>Name</dt>
        <dd>{file.originalFilename}</dd>
        <dt>Type</dt>
        <dd>{fileTypeName(file.mimeType, file.fullFileExtension)}</dd>
        <dt>Size</dt>
        <dd>{formatBytes(file.size)}</dd>
        {dimension && (
          <>
            <dt>Dimensions</dt>
            <dd>
              {dimension.width} × {dimension.height} px
            </dd>
          </>
        )}
        <dt>MD5</dt>
        <dd className="mono break">{file.md5Checksum}</dd>
        <dt>Added</dt>
        <dd>{formatDate(file.createdTime)}</dd>
      </dl>
    </details>
  );
}
