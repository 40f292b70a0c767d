import { createBrowserRouter } from 'react-router';
import { Root } from './Root';
import { RouteErrorPage } from './pages/RouteErrorPage';
import { GalleryPage } from './pages/GalleryPage';
import { ImportPage } from './pages/ImportPage';
import { NotFoundPage } from './pages/NotFoundPage';
import { PortfolioCreatePage } from './pages/PortfolioCreatePage';
import { PortfolioDetailPage } from './pages/PortfolioDetailPage';
import { PortfolioEditPage } from './pages/PortfolioEditPage';
import { SettingsPage } from './pages/SettingsPage';
import { TrashPage } from './pages/TrashPage';
import { UsersPage } from './pages/UsersPage';

// A data router: the unsaved-changes guard needs useBlocker, which only works with one.
export const router = createBrowserRouter([
  {
    element: <Root />,
    errorElement: <RouteErrorPage />,
    children: [
      { index: true, element: <GalleryPage /> },
      { path: 'portfolios/new', element: <PortfolioCreatePage /> },
      { path: 'portfolios/:portfolioId', element: <PortfolioDetailPage /> },
      { path: 'portfolios/:portfolioId/edit', element: <PortfolioEditPage /> },
      { path: 'users', element: <UsersPage /> },
      { path: 'trash', element: <TrashPage /> },
      { path: 'import', element: <ImportPage /> },
      // The desktop shell fills this slot with LAN sharing settings.
      { path: 'settings', element: <SettingsPage /> },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
]);
