import { type FormEvent, useId, useState } from 'react';
import { ApiError, describeError } from '../api/api-error';
import { useModalDialog } from '../components/use-modal-dialog';
import { useSession } from '../session/use-session';

function signInErrorMessage(error: unknown): string {
  if (error instanceof ApiError && error.status === 401) return 'Wrong username or password.';
  return describeError(error);
}

/**
 * The sign-in form. As a page when nobody is signed in; as a modal dialog over the still
 * mounted app when the session ended mid-work.
 */
export function SignInScreen({ asDialog = false }: { asDialog?: boolean }) {
  const { signIn, notice } = useSession();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const dialogRef = useModalDialog(asDialog);
  const headingId = useId();
  const errorId = useId();

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(username.trim(), password);
    } catch (caught) {
      setError(signInErrorMessage(caught));
      setPassword('');
    } finally {
      setBusy(false);
    }
  }

  const form = (
    <form
      className="sign-in card"
      onSubmit={(event) => void submit(event)}
      aria-labelledby={headingId}
    >
      <h1 id={headingId}>Sign in</h1>
      {notice && !error && <p className="notice">{notice}</p>}
      {error && (
        <p className="form-error" id={errorId} role="alert">
          {error}
        </p>
      )}
      <label className="field">
        <span className="field-label">Username</span>
        <input
          name="username"
          autoComplete="username"
          autoFocus
          required
          value={username}
          onChange={(event) => setUsername(event.target.value)}
          aria-describedby={error ? errorId : undefined}
        />
      </label>
      <label className="field">
        <span className="field-label">Password</span>
        <input
          name="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(event) => setPassword(event.target.value)}
          aria-describedby={error ? errorId : undefined}
        />
      </label>
      <button type="submit" className="button button--primary" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );

  if (asDialog) {
    return (
      <dialog
        ref={dialogRef}
        className="sign-in-dialog"
        aria-labelledby={headingId}
        // The dialog cannot be dismissed: without a session nothing else works.
        onCancel={(event) => event.preventDefault()}
      >
        {form}
      </dialog>
    );
  }
  return (
    <main className="sign-in-page" id="main">
      <p className="brand brand--large">Portfolio Manager</p>
      {form}
    </main>
  );
}
