import { useEffect, useState } from 'react';
import { Link, NavLink, Outlet, useLocation, useNavigate } from 'react-router';
import { paths } from '../paths';
import { isAdmin, isStaff } from '../session/permissions';
import { useSession } from '../session/use-session';
import { SignInScreen } from '../pages/SignInScreen';
import { SyncIndicator } from '../sync/SyncIndicator';
import { OfflineBanner } from './OfflineBanner';

export function AppShell() {
  const { status, user, signOut } = useSession();
  const navigate = useNavigate();
  const location = useLocation();
  // On a phone the navigation and account fold behind a menu button (styles.css).
  const [menuOpen, setMenuOpen] = useState(false);
  const [menuPath, setMenuPath] = useState(location.pathname);
  if (menuPath !== location.pathname) {
    // Going somewhere closes the menu.
    setMenuPath(location.pathname);
    setMenuOpen(false);
  }
  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') setMenuOpen(false);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [menuOpen]);

  if (status === 'loading') {
    return (
      <div className="boot" role="status" aria-live="polite">
        <OfflineBanner />
        <p>Loading Portfolio Manager…</p>
      </div>
    );
  }

  if (!user || status === 'signed-out') {
    return (
      <>
        <OfflineBanner />
        <SignInScreen />
      </>
    );
  }

  // On expiry the page stays mounted (inert) under the sign-in dialog, so unsaved edits
  // survive and the user lands where they were.
  const expired = status === 'expired';
  return (
    <>
      <div className="app" inert={expired} key={user.username}>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <OfflineBanner />
        <header className={`app-header ${menuOpen ? 'app-header--menu-open' : ''}`}>
          <Link to={paths.gallery()} className="brand">
            Portfolio Manager
          </Link>
          <button
            type="button"
            className="button button--quiet menu-button"
            aria-expanded={menuOpen}
            aria-controls="header-menu"
            onClick={() => setMenuOpen((open) => !open)}
          >
            <span className="menu-button-icon" aria-hidden="true" />
            Menu
          </button>
          <div className="header-menu" id="header-menu">
            <nav aria-label="Main" className="main-nav">
              <NavLink to={paths.gallery()} end>
                Gallery
              </NavLink>
              {isStaff(user) && <NavLink to={paths.newPortfolio()}>New portfolio</NavLink>}
              {isStaff(user) && <NavLink to={paths.trash()}>Trash</NavLink>}
              {isAdmin(user) && <NavLink to={paths.users()}>Users</NavLink>}
              <NavLink to={paths.settings()}>Settings</NavLink>
            </nav>
            <div className="account">
              {isAdmin(user) && <SyncIndicator />}
              <span className="account-name">
                {user.username} <span className="role-chip">{user.role}</span>
              </span>
              <button
                type="button"
                className="button button--quiet"
                onClick={() => {
                  // The next person to sign in starts at the gallery, not on this user's page.
                  void signOut().then(() => navigate(paths.gallery(), { replace: true }));
                }}
              >
                Sign out
              </button>
            </div>
          </div>
        </header>
        <main id="main" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
      {expired && <SignInScreen asDialog />}
    </>
  );
}
