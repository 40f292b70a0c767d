import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedUserRepository } from '../../../server/storage/embedded/embedded-user-repository';
import { Store } from '../../../server/storage/embedded/store';
import { userRepositoryContract, type UserContractBackend } from './user-repository.contract';

/** The embedded backend: a Store in a temp data directory, reopened from disk on `reopen`. */
userRepositoryContract('embedded', async (): Promise<UserContractBackend> => {
  const dataDir = await mkdtemp(join(tmpdir(), 'portfolio-user-contract-'));
  let store = await Store.open({ dataDir });
  const backend: UserContractBackend = {
    repository: new EmbeddedUserRepository(store),
    async reopen() {
      await store.close();
      store = await Store.open({ dataDir });
      backend.repository = new EmbeddedUserRepository(store);
      return backend.repository;
    },
    async destroy() {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return backend;
});
