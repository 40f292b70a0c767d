import { Link } from 'react-router';
import { useDocumentTitle } from '../components/use-document-title';
import { paths } from '../paths';

export function NotFoundPage() {
  useDocumentTitle('Not found');
  return (
    <div className="page empty-state">
      <h1>Page not found</h1>
      <p>
        There is nothing at this address. <Link to={paths.gallery()}>Go to the gallery</Link>.
      </p>
    </div>
  );
}
