/**
 * Portfolio repositories: the contract every backend implements lives in
 * portfolio-repository-contract.ts; the embedded backend is server/storage/
 * embedded-portfolio-repository.ts.
 */
export * from './portfolio-repository-contract';
