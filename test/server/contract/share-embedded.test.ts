import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedShareRepository } from '../../../server/storage/embedded/embedded-share-repository';
import { Store } from '../../../server/storage/embedded/store';
import { shareRepositoryContract, type ShareContractBackend } from './share-repository.contract';

/** The embedded backend: a Store in a temp data directory, reopened from disk on `reopen`. */
shareRepositoryContract('embedded', async (): Promise<ShareContractBackend> => {
  const dataDir = await mkdtemp(join(tmpdir(), 'portfolio-share-contract-'));
  let store = await Store.open({ dataDir });
  const backend: ShareContractBackend = {
    repository: new EmbeddedShareRepository(store),
    async reopen() {
      await store.close();
      store = await Store.open({ dataDir });
      backend.repository = new EmbeddedShareRepository(store);
      return backend.repository;
    },
    async destroy() {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return backend;
});
