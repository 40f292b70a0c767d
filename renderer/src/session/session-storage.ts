/**
 * The session id lives in memory and in sessionStorage (it survives a reload of this tab but
 * not closing it, and never reaches localStorage, which every tab and later visit could read).
 */
const KEY = 'portfolio-manager.session';

let current: string | null = readStored();

function readStored(): string | null {
  try {
    return typeof sessionStorage === 'undefined' ? null : sessionStorage.getItem(KEY);
  } catch {
    // Storage can be disabled by the browser; memory alone still works for this page's life.
    return null;
  }
}

export function getStoredSessionId(): string | null {
  return current;
}

export function storeSessionId(sessionId: string | null): void {
  current = sessionId;
  try {
    if (sessionId) sessionStorage.setItem(KEY, sessionId);
    else sessionStorage.removeItem(KEY);
  } catch {
    // See readStored.
  }
}
