import { useEffect, useState } from 'react';
import { configureApi, pingServer } from '../api/api-client';

const RETRY_MS = 4000;

/**
 * False while the server cannot be reached. Every API call reports whether it got an answer;
 * while unreachable, a light ping retries so the banner clears by itself on reconnect.
 */
export function useServerReachable(): boolean {
  const [reachable, setReachable] = useState(true);

  useEffect(() => {
    configureApi({ onReachabilityChange: setReachable });
    // The browser's online/offline flag only prompts a check: the desktop app's server is on
    // this machine and stays reachable when the network is gone, and a LAN server can be
    // unreachable while the browser believes it is online.
    const check = () => void pingServer();
    window.addEventListener('offline', check);
    window.addEventListener('online', check);
    return () => {
      window.removeEventListener('offline', check);
      window.removeEventListener('online', check);
    };
  }, []);

  useEffect(() => {
    if (reachable) return;
    const timer = window.setInterval(() => void pingServer(), RETRY_MS);
    return () => window.clearInterval(timer);
  }, [reachable]);

  return reachable;
}
