/**
 * The public showcase's pages (DESIGN §15), rendered on the server to static HTML: no script at
 * all, no inline style, every text escaped by React; only certificateDesc is HTML, sanitized by
 * the public view. The share-link page (/s/<token>) uses the same Layout and PortfolioPage.
 */
import type { ReactNode } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { fieldLabelOf } from '../../shared';
import { widthsFor, type DerivativeFormat } from './derivatives';
import type { GalleryQuery, ShowcaseLinks } from './links';
import type { PublicCard, PublicImage, PublicView } from './public-view';
import type { ShowcaseSettings } from './showcase-settings';

export interface PageOptions {
  settings: Pick<ShowcaseSettings, 'title' | 'intro' | 'logo' | 'publicOriginals'>;
  links: ShowcaseLinks;
  /** The derivative formats made, best first (the last is the fallback every browser reads). */
  formats: DerivativeFormat[];
}

export interface LayoutProps {
  options: PageOptions;
  /** The page's own title (the showcase's title is added). */
  title: string;
  description: string;
  /** This page's own link (for og:url and the canonical link). */
  path: string;
  image?: { portfolioId: string; image: PublicImage } | undefined;
  ogType?: 'website' | 'article';
  /** Robots may not index it (the 404 page). */
  noIndex?: boolean;
  children: ReactNode;
}

/** The frame of every showcase page: head (Open Graph, feeds, stylesheet), header and footer. */
export function Layout({
  options,
  title,
  description,
  path,
  image,
  ogType = 'website',
  noIndex = false,
  children,
}: LayoutProps) {
  const { settings, links } = options;
  const fullTitle = title === settings.title ? title : `${title} · ${settings.title}`;
  const url = links.absolute(path);
  const fallback = options.formats.at(-1) ?? 'webp';
  const imageUrl = image
    ? links.absolute(
        links.image(
          image.portfolioId,
          image.image.fileId,
          widthsFor(image.image.width).at(-1)!,
          fallback,
        ),
      )
    : undefined;
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{fullTitle}</title>
        <meta name="description" content={description} />
        {noIndex && <meta name="robots" content="noindex" />}
        <meta name="referrer" content="no-referrer" />
        <link rel="stylesheet" href={links.stylesheet()} />
        {!noIndex && <link rel="canonical" href={url} />}
        <link
          rel="alternate"
          type="application/feed+json"
          title={settings.title}
          href={links.jsonFeed()}
        />
        <link
          rel="alternate"
          type="application/rss+xml"
          title={settings.title}
          href={links.rss()}
        />
        <link rel="sitemap" type="application/xml" href={links.sitemap()} />
        <meta property="og:site_name" content={settings.title} />
        <meta property="og:title" content={title} />
        <meta property="og:description" content={description} />
        <meta property="og:type" content={ogType} />
        <meta property="og:url" content={url} />
        {imageUrl && <meta property="og:image" content={imageUrl} />}
        {image && image.image.description && (
          <meta property="og:image:alt" content={image.image.description} />
        )}
        <meta name="twitter:card" content={imageUrl ? 'summary_large_image' : 'summary'} />
        <meta name="twitter:title" content={title} />
        <meta name="twitter:description" content={description} />
        {imageUrl && <meta name="twitter:image" content={imageUrl} />}
      </head>
      <body>
        <a className="skip" href="#main">
          Skip to the content
        </a>
        <header className="site">
          <a className="brand" href={links.gallery()}>
            {settings.logo && (
              <img className="logo" src={links.logo()} alt="" width={40} height={40} />
            )}
            <span>{settings.title}</span>
          </a>
        </header>
        <main id="main">{children}</main>
        <footer className="site">
          <a href={links.gallery()}>All work</a> · <a href={links.rss()}>RSS feed</a> ·{' '}
          <a href={links.jsonFeed()}>JSON feed</a>
        </footer>
      </body>
    </html>
  );
}

/** An image in every derivative width and format; the browser picks by `sizes`. */
function Picture({
  portfolioId,
  image,
  sizes,
  options,
  eager = false,
}: {
  portfolioId: string;
  image: PublicImage;
  sizes: string;
  options: PageOptions;
  eager?: boolean;
}) {
  const { links, formats } = options;
  const widths = widthsFor(image.width);
  const srcSet = (format: DerivativeFormat) =>
    widths
      .map(
        (width) =>
          `${links.image(portfolioId, image.fileId, width, format)} ${Math.min(width, image.width)}w`,
      )
      .join(', ');
  const fallback = formats.at(-1) ?? 'webp';
  const middle = widths[Math.min(1, widths.length - 1)]!;
  return (
    <picture>
      {formats.slice(0, -1).map((format) => (
        <source key={format} type={`image/${format}`} srcSet={srcSet(format)} sizes={sizes} />
      ))}
      <img
        src={links.image(portfolioId, image.fileId, middle, fallback)}
        srcSet={srcSet(fallback)}
        sizes={sizes}
        width={image.width}
        height={image.height}
        alt={image.description}
        loading={eager ? 'eager' : 'lazy'}
        decoding="async"
      />
    </picture>
  );
}

/** Text as paragraphs: a blank line starts a new one; single line breaks are kept. */
function Paragraphs({ text }: { text: string }) {
  const parts = text
    .split(/\n\s*\n/)
    .map((part) => part.trim())
    .filter(Boolean);
  return (
    <>
      {parts.map((part, at) => (
        <p key={at} className="lines">
          {part}
        </p>
      ))}
    </>
  );
}

function TagLinks({
  label,
  tags,
  link,
}: {
  label: string;
  tags: string[];
  link?: (tag: string) => string;
}) {
  if (tags.length === 0) return null;
  return (
    <>
      <dt>{label}</dt>
      <dd>
        <ul className="tags">
          {tags.map((tag) => (
            <li key={tag}>{link ? <a href={link(tag)}>{tag}</a> : tag}</li>
          ))}
        </ul>
      </dd>
    </>
  );
}

export interface GalleryPageProps {
  options: PageOptions;
  query: GalleryQuery;
  cards: PublicCard[];
  total: number;
  /** The next page's token, or "" on the last page. */
  next: string;
  categories: string[];
  tags: string[];
}

/** What the gallery lists, in words ("Work in Interior matching “lake”"). */
function galleryHeading(query: GalleryQuery): string {
  const parts = ['Work'];
  if (query.category) parts.push(`in ${query.category}`);
  if (query.tag) parts.push(`related to ${query.tag}`);
  if (query.q) parts.push(`matching “${query.q}”`);
  return parts.length === 1 ? 'All work' : parts.join(' ');
}

export function GalleryPage({
  options,
  query,
  cards,
  total,
  next,
  categories,
  tags,
}: GalleryPageProps) {
  const { settings, links } = options;
  const heading = galleryHeading(query);
  const filtered = Boolean(query.q || query.category || query.tag);
  return (
    <Layout
      options={options}
      title={filtered ? heading : settings.title}
      description={settings.intro || `${settings.title}: published work.`}
      path={links.gallery({ ...query, after: undefined })}
      image={
        cards[0]?.cover ? { portfolioId: cards[0].portfolioId, image: cards[0].cover } : undefined
      }
    >
      <section className="intro">
        <h1>{settings.title}</h1>
        {settings.intro && <Paragraphs text={settings.intro} />}
      </section>
      <form className="search" method="get" action={links.gallery()} role="search">
        <label htmlFor="q">Search the work</label>
        <div className="search-row">
          <input id="q" name="q" type="search" defaultValue={query.q ?? ''} maxLength={200} />
          {query.category && <input type="hidden" name="category" value={query.category} />}
          {query.tag && <input type="hidden" name="tag" value={query.tag} />}
          <button type="submit">Search</button>
        </div>
      </form>
      {(categories.length > 0 || tags.length > 0) && (
        <nav className="browse" aria-label="Browse">
          {categories.length > 0 && (
            <div>
              <h2>Categories</h2>
              <ul className="tags">
                {categories.map((category) => (
                  <li key={category}>
                    <a
                      href={links.gallery({ category })}
                      aria-current={query.category === category ? 'page' : undefined}
                    >
                      {category}
                    </a>
                  </li>
                ))}
              </ul>
            </div>
          )}
          {tags.length > 0 && (
            <div>
              <h2>{fieldLabelOf('relativeCategory')}</h2>
              <ul className="tags">
                {tags.map((tag) => (
                  <li key={tag}>
                    <a
                      href={links.gallery({ tag })}
                      aria-current={query.tag === tag ? 'page' : undefined}
                    >
                      {tag}
                    </a>
                  </li>
                ))}
              </ul>
            </div>
          )}
        </nav>
      )}
      <section aria-labelledby="results">
        <h2 id="results">
          {heading}{' '}
          <span className="count">({total === 1 ? '1 portfolio' : `${total} portfolios`})</span>
        </h2>
        {filtered && (
          <p>
            <a href={links.gallery()}>Show all work</a>
          </p>
        )}
        {cards.length === 0 ? (
          <p>Nothing here yet.</p>
        ) : (
          <ul className="grid">
            {cards.map((card) => (
              <li key={card.portfolioId} className="card">
                <a href={links.portfolio(card.portfolioId)}>
                  {card.cover ? (
                    <Picture
                      portfolioId={card.portfolioId}
                      image={card.cover}
                      sizes="(min-width: 60rem) 30vw, (min-width: 40rem) 45vw, 92vw"
                      options={options}
                    />
                  ) : (
                    <span className="no-image">No picture</span>
                  )}
                  <span className="card-title">{card.projectTitle}</span>
                </a>
                <span className="card-meta">
                  {card.category}
                  {card.staffPick && <strong className="pick"> · Staff pick</strong>}
                </span>
              </li>
            ))}
          </ul>
        )}
        <nav className="pager" aria-label="Pages">
          {query.after && <a href={links.gallery({ ...query, after: undefined })}>First page</a>}
          {next && (
            <a rel="next" href={links.gallery({ ...query, after: next })}>
              Next page
            </a>
          )}
        </nav>
      </section>
    </Layout>
  );
}

/** The first words of a text, for descriptions and feeds. */
export function summaryOf(
  view: Pick<PublicView, 'aboutProject' | 'projectDetail'>,
  max = 200,
): string {
  const text = (view.aboutProject || view.projectDetail).replace(/\s+/g, ' ').trim();
  return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}

export function PortfolioPage({ options, view }: { options: PageOptions; view: PublicView }) {
  const { links, settings } = options;
  const id = view.portfolioId;
  return (
    <Layout
      options={options}
      title={view.projectTitle}
      description={summaryOf(view)}
      path={links.portfolio(id)}
      image={view.cover ? { portfolioId: id, image: view.cover } : undefined}
      ogType="article"
    >
      <article className="portfolio">
        <p className="crumbs">
          <a href={links.gallery()}>All work</a> ›{' '}
          <a href={links.gallery({ category: view.category })}>{view.category}</a>
        </p>
        <h1>{view.projectTitle}</h1>
        {view.staffPick && <p className="pick">Staff pick</p>}
        {view.cover && (
          <figure className="cover">
            <Picture
              portfolioId={id}
              image={view.cover}
              sizes="(min-width: 64rem) 60rem, 100vw"
              options={options}
              eager
            />
            {view.cover.description && <figcaption>{view.cover.description}</figcaption>}
            {settings.publicOriginals && (
              <a className="original" href={links.original(id, view.cover.fileId)}>
                Open the original image
              </a>
            )}
          </figure>
        )}
        {view.aboutProject && (
          <section>
            <h2>{fieldLabelOf('aboutProject')}</h2>
            <Paragraphs text={view.aboutProject} />
          </section>
        )}
        <section>
          <h2>{fieldLabelOf('projectDetail')}</h2>
          <Paragraphs text={view.projectDetail} />
        </section>
        <dl className="facts">
          <dt>{fieldLabelOf('category')}</dt>
          <dd>
            <a href={links.gallery({ category: view.category })}>{view.category}</a>
          </dd>
          <TagLinks
            label={fieldLabelOf('relativeCategory')}
            tags={view.relativeCategory}
            link={(tag) => links.gallery({ tag })}
          />
          {view.readyToBuy && (
            <>
              <dt>{fieldLabelOf('readyToBuy')}</dt>
              <dd>{view.readyToBuy}</dd>
            </>
          )}
          <TagLinks label={fieldLabelOf('occasion')} tags={view.occasion} />
          <TagLinks label={fieldLabelOf('referenceStyling')} tags={view.referenceStyling} />
          <TagLinks label={fieldLabelOf('generalTag')} tags={view.generalTag} />
          <TagLinks label={fieldLabelOf('certificateByOrg')} tags={view.certificateByOrg} />
        </dl>
        {view.certificateDesc && (
          <section>
            <h2>{fieldLabelOf('certificateDesc')}</h2>
            {/* Sanitized by the public view (an allow-list without scripts or styles). */}
            <div className="html" dangerouslySetInnerHTML={{ __html: view.certificateDesc }} />
          </section>
        )}
        {view.draftingProcess.length > 0 && (
          <section>
            <h2>{fieldLabelOf('draftingProcess')}</h2>
            <ul className="process">
              {view.draftingProcess.map((image) => (
                <li key={image.fileId}>
                  <figure>
                    <Picture
                      portfolioId={id}
                      image={image}
                      sizes="(min-width: 60rem) 30vw, (min-width: 40rem) 45vw, 92vw"
                      options={options}
                    />
                    {image.description && <figcaption>{image.description}</figcaption>}
                  </figure>
                </li>
              ))}
            </ul>
          </section>
        )}
        {view.additionalDocument.length > 0 && (
          <section>
            <h2>{fieldLabelOf('additionalDocument')}</h2>
            <ul>
              {view.additionalDocument.map((document) => (
                <li key={document.fileId}>
                  <a href={links.document(id, document.fileId)} download>
                    {document.name}
                  </a>
                </li>
              ))}
            </ul>
          </section>
        )}
      </article>
    </Layout>
  );
}

/** The one page for anything not on the showcase: unknown, unpublished and inactive alike. */
export function NotFoundPage({ options }: { options: PageOptions }) {
  const { links } = options;
  return (
    <Layout
      options={options}
      title="Not found"
      description="This page is not on the showcase."
      path={links.gallery()}
      noIndex
    >
      <h1>Not found</h1>
      <p>This page is not on the showcase. It may have been taken down, or the link is mistyped.</p>
      <p>
        <a href={links.gallery()}>See all work</a>
      </p>
    </Layout>
  );
}

/** A page as a document. */
export function renderPage(page: ReactNode): string {
  return `<!doctype html>${renderToStaticMarkup(page)}`;
}

/** One portfolio's page as HTML (the share-link page renders through this too). */
export function renderPortfolioPage(view: PublicView, options: PageOptions): string {
  return renderPage(<PortfolioPage view={view} options={options} />);
}
