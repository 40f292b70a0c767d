/** Path builders, so links and navigations cannot drift from the route table. */
export const paths = {
  gallery: () => '/',
  newPortfolio: () => '/portfolios/new',
  portfolio: (portfolioId: string) => `/portfolios/${encodeURIComponent(portfolioId)}`,
  editPortfolio: (portfolioId: string) => `/portfolios/${encodeURIComponent(portfolioId)}/edit`,
  users: () => '/users',
  trash: () => '/trash',
  importZip: () => '/import',
  settings: () => '/settings',
};
