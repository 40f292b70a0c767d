/**
 * The ShareRepository contract suite (DESIGN §15): share links behave the same on every backend.
 * A backend's test file calls `shareRepositoryContract` with a factory that makes an empty
 * repository (and can reopen it, to check durability).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type {
  ShareRecord,
  ShareRepository,
} from '../../../server/repositories/share-repository-contract';

export interface ShareContractBackend {
  repository: ShareRepository;
  /** Closes the repository and opens it again from what is durable. */
  reopen(): Promise<ShareRepository>;
  destroy(): Promise<void>;
}

const T0 = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;

function share(shareId: string, overrides: Partial<ShareRecord> = {}): ShareRecord {
  return {
    shareId,
    portfolioId: 'p-1',
    tokenHash: `hash-of-${shareId}`,
    passwordHash: null,
    expiresAt: T0 + DAY,
    maxUses: null,
    uses: 0,
    createdTime: T0,
    createdBy: 'amy',
    revokedTime: null,
    ...overrides,
  };
}

export function shareRepositoryContract(
  name: string,
  factory: () => Promise<ShareContractBackend>,
): void {
  describe(`ShareRepository contract: ${name}`, () => {
    let backend: ShareContractBackend | undefined;
    const open = async () => {
      backend = await factory();
      return backend.repository;
    };
    afterEach(async () => {
      await backend?.destroy();
      backend = undefined;
    });

    it('keeps shares durably, finds them by id and token hash, lists a portfolio’s oldest first', async () => {
      let shares = await open();
      const withPassword = share('b', {
        createdTime: T0 + 1,
        passwordHash: 'scrypt$x',
        maxUses: 3,
      });
      await shares.insert(withPassword);
      await shares.insert(share('a'));
      await shares.insert(share('c', { portfolioId: 'p-2', tokenHash: 'hash-c' }));
      shares = await backend!.reopen();
      expect(await shares.get('b')).toEqual(withPassword);
      expect(await shares.byTokenHash('hash-c')).toEqual(
        share('c', { portfolioId: 'p-2', tokenHash: 'hash-c' }),
      );
      expect(await shares.byTokenHash('hash-of-nothing')).toBeUndefined();
      expect((await shares.listOf('p-1')).map((s) => s.shareId)).toEqual(['a', 'b']);
      expect(await shares.listOf('p-9')).toEqual([]);
    });

    it('revokes once: a revoked share is no longer listed but still found by its token', async () => {
      let shares = await open();
      await shares.insert(share('a'));
      expect(await shares.revoke('a', T0 + 5)).toBe(true);
      expect(await shares.revoke('a', T0 + 6)).toBe(false);
      expect(await shares.revoke('none', T0 + 6)).toBe(false);
      shares = await backend!.reopen();
      expect(await shares.listOf('p-1')).toEqual([]);
      expect(await shares.byTokenHash('hash-of-a')).toMatchObject({ revokedTime: T0 + 5 });
      expect(await shares.use('a', T0 + 7)).toBeUndefined();
    });

    it('counts uses until expiry or the limit, never past the limit when opens race', async () => {
      let shares = await open();
      await shares.insert(share('a', { maxUses: 3 }));
      await shares.insert(share('b'));
      const results = await Promise.all(Array.from({ length: 8 }, () => shares.use('a', T0 + 10)));
      expect(results.filter(Boolean)).toHaveLength(3);
      expect(
        results
          .filter(Boolean)
          .map((s) => s!.uses)
          .sort(),
      ).toEqual([1, 2, 3]);
      expect(await shares.use('b', T0 + DAY)).toBeUndefined(); // expired at expiresAt
      expect(await shares.use('b', T0 + DAY - 1)).toMatchObject({ uses: 1 });
      expect(await shares.use('none', T0)).toBeUndefined();
      shares = await backend!.reopen();
      expect(await shares.get('a')).toMatchObject({ uses: 3 });
      expect(await shares.get('b')).toMatchObject({ uses: 1 });
    });
  });
}
