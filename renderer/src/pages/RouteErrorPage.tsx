import { useRouteError } from 'react-router';
import { describeError } from '../api/api-error';

/** The last line of defence: a render error shows a way out instead of a blank window. */
export function RouteErrorPage() {
  const error = useRouteError();
  return (
    <main className="page empty-state" id="main">
      <h1>Something went wrong</h1>
      <p>{describeError(error)}</p>
      <p>
        <a href="/">Reload the gallery</a>
      </p>
    </main>
  );
}
