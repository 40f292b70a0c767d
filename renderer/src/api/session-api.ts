import type { SignInBody } from '../../../shared';
import { anonymousApi, api, done, ok } from './api-client';

export const signIn = (body: SignInBody) =>
  ok(anonymousApi.POST('/api/v1/appauth', { body }), true);
export const getCurrentSession = (signal?: AbortSignal) =>
  ok(api.GET('/api/v1/appauth', { signal }));
export const signOut = () => done(api.DELETE('/api/v1/appauth'));
