import { useServerReachable } from './use-server-reachable';

export function OfflineBanner() {
  const reachable = useServerReachable();
  return (
    <div role="status" aria-live="polite" className="offline-slot">
      {!reachable && (
        <p className="offline-banner">
          The server cannot be reached. Changes cannot be saved until it is back; this message
          clears by itself when it reconnects.
        </p>
      )}
    </div>
  );
}
