import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedPortfolioRepository } from '../../../server/storage/embedded/embedded-portfolio-repository';
import { Store } from '../../../server/storage/embedded/store';
import { portfolioRepositoryContract, type ContractBackend } from './portfolio-repository.contract';

/** The embedded backend: a Store in a temp data directory, reopened from disk on `reopen`. */
portfolioRepositoryContract('embedded', async (): Promise<ContractBackend> => {
  const dataDir = await mkdtemp(join(tmpdir(), 'portfolio-contract-'));
  let store = await Store.open({ dataDir });
  const backend: ContractBackend = {
    repository: await EmbeddedPortfolioRepository.open(store),
    async reopen() {
      await store.close();
      store = await Store.open({ dataDir });
      backend.repository = await EmbeddedPortfolioRepository.open(store);
      return backend.repository;
    },
    async destroy() {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return backend;
});
