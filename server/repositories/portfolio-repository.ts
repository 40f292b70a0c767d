import type { PortfolioRecord } from '../../shared';
import { ApiError } from '../errors';
import type { Store } from '../storage/store';

export * from './portfolio-repository-contract';

/**
 * @deprecated The routes' old write path, kept only until they go through PortfolioService over
 * the contract (`app.portfolios`); it stamps no seq and keeps no history.
 */
export class LegacyPortfolioRepository {
  constructor(private readonly store: Store) {}

  get(portfolioId: string): PortfolioRecord | undefined {
    return this.store.get<PortfolioRecord>('portfolios', portfolioId);
  }

  all(): ReadonlyMap<string, PortfolioRecord> {
    return this.store.collection<PortfolioRecord>('portfolios');
  }

  async insert(record: PortfolioRecord): Promise<void> {
    if (this.get(record.portfolioId)) {
      throw new ApiError('ID_TAKEN', `The portfolioId "${record.portfolioId}" is already taken.`);
    }
    await this.store.commit([
      { type: 'put', col: 'portfolios', key: record.portfolioId, value: record },
    ]);
  }

  async replace(record: PortfolioRecord): Promise<void> {
    await this.store.commit([
      { type: 'put', col: 'portfolios', key: record.portfolioId, value: record },
    ]);
  }
}
