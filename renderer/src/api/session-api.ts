import type { CurrentSession, Session, SignInBody } from '../../../shared';
import { apiRequest } from './api-client';

const BASE = '/api/v1/appauth';

export const signIn = (body: SignInBody) =>
  apiRequest<Session>('POST', BASE, { body, anonymous: true });
export const getCurrentSession = (signal?: AbortSignal) =>
  apiRequest<CurrentSession>('GET', BASE, { signal });
export const signOut = () => apiRequest<void>('DELETE', BASE);
