/**
 * The desktop shell's session id, in memory only (the shell hands it out again after a reload).
 * A browser keeps no session id at all: its session is the HttpOnly cookie set at sign-in
 * (docs/API.md §1), which no script can read, and which every tab of the site shares.
 */
let current: string | null = null;

export function getStoredSessionId(): string | null {
  return current;
}

export function storeSessionId(sessionId: string | null): void {
  current = sessionId;
}
