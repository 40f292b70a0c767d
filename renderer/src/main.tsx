import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { ApiError } from './api/api-error';
import { ToastProvider } from './components/ToastProvider';
import { router } from './router';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A 4xx will not change by asking again; network hiccups and 5xx might.
      retry: (failureCount, error) =>
        !(error instanceof ApiError && error.status < 500) && failureCount < 2,
      staleTime: 15_000,
      refetchOnWindowFocus: false,
      // Never pause for navigator.onLine: the desktop app's server runs on this machine and
      // answers without any network. Reachability is judged by real requests instead.
      networkMode: 'always',
    },
    mutations: { networkMode: 'always' },
  },
});

// Object URLs made by useFileUrl hold their blob until revoked: free them with the cache entry.
queryClient.getQueryCache().subscribe((event) => {
  const data: unknown = event.query.state.data;
  if (event.type === 'removed' && event.query.queryKey[0] === 'files' && typeof data === 'string') {
    URL.revokeObjectURL(data);
  }
});

const container = document.getElementById('root');
if (!container) throw new Error('index.html lacks #root');

createRoot(container).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <ToastProvider>
        <RouterProvider router={router} />
      </ToastProvider>
    </QueryClientProvider>
  </StrictMode>,
);
