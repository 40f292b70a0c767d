/**
 * The pages of a share link (DESIGN §15), rendered on the server with React: no script, one
 * inline stylesheet allowed by its hash, so the page works under a CSP without 'unsafe-inline'.
 * `renderSharePage` is the one entry for the portfolio itself, so its look can follow the
 * showcase's later without touching the routes.
 */
import { createHash } from 'node:crypto';
import type { ReactNode } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import type { PublicImage, PublicPortfolio } from '../domain/public-portfolio';

const CSS = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;background:#f6f6f4}
main{max-width:56rem;margin:0 auto;padding:1.25rem 1rem 3rem}
h1{font-size:1.75rem;line-height:1.25;margin:.5rem 0 1rem;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:2rem 0 .75rem}
img{display:block;max-width:100%;height:auto;border-radius:6px;background:#e4e4e0}
figure{margin:0 0 1.25rem}
figcaption{font-size:.9rem;color:#4a4a4a;margin-top:.35rem}
dl{display:grid;grid-template-columns:minmax(8rem,max-content) 1fr;gap:.5rem 1rem;margin:1.5rem 0}
dl .row{display:contents}
dt{font-weight:600;color:#333}
dd{margin:0;white-space:pre-wrap;overflow-wrap:anywhere}
dd.html{white-space:normal}
ul.tags{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.4rem}
ul.tags li{background:#e7ece9;border-radius:999px;padding:.1rem .65rem;font-size:.92rem}
.gallery{display:grid;grid-template-columns:repeat(auto-fill,minmax(15rem,1fr));gap:1rem}
.note{color:#4a4a4a;font-size:.9rem;margin-top:3rem}
form{display:grid;gap:.6rem;max-width:22rem;margin-top:1.5rem}
label{font-weight:600}
input{font:inherit;padding:.55rem .7rem;border:1px solid #767676;border-radius:6px}
button{font:inherit;padding:.6rem 1rem;border:0;border-radius:6px;background:#1f5f4a;color:#fff;cursor:pointer}
:focus-visible{outline:3px solid #1a73e8;outline-offset:2px}
.error{color:#a4000f;font-weight:600}
@media (max-width:30rem){dl{grid-template-columns:1fr}dd{margin-bottom:.6rem}h1{font-size:1.45rem}}
`;

/** The CSP of every share page: nothing runs; only this stylesheet and same-origin images. */
export const SHARE_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(CSS).digest('base64')}'`,
  "img-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

function Page({ title, children }: { title: string; children: ReactNode }) {
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <title>{title}</title>
        <style dangerouslySetInnerHTML={{ __html: CSS }} />
      </head>
      <body>
        <main>{children}</main>
      </body>
    </html>
  );
}

const html = (page: ReactNode) => `<!doctype html>${renderToStaticMarkup(page)}`;

function Image({
  image,
  src,
  alt,
  large,
}: {
  image: PublicImage;
  src: string;
  alt: string;
  large?: boolean;
}) {
  // Sizes from the stored dimensions keep the page from jumping while images load.
  const ratio = image.width && image.height ? { width: image.width, height: image.height } : {};
  return (
    <figure>
      <img src={src} alt={alt} {...ratio} loading={large ? 'eager' : 'lazy'} />
      {image.description ? <figcaption>{image.description}</figcaption> : null}
    </figure>
  );
}

export interface SharePageView {
  portfolio: PublicPortfolio;
  /** The signed link of one of its images. */
  imageUrl: (image: PublicImage) => string;
}

/** A shared portfolio, read-only: its public fields and images (DESIGN §15). */
export function renderSharePage({ portfolio, imageUrl }: SharePageView): string {
  const { projectTitle, fields, cover, drafting } = portfolio;
  return html(
    <Page title={projectTitle}>
      <h1>{projectTitle}</h1>
      {cover ? (
        <Image image={cover} src={imageUrl(cover)} alt={cover.description || 'Cover image'} large />
      ) : null}
      {fields.length > 0 ? (
        <dl>
          {fields.map((field) => (
            <div key={field.key} className="row">
              <dt>{field.label}</dt>
              {field.kind === 'tags' ? (
                <dd>
                  <ul className="tags">
                    {field.value.map((tag) => (
                      <li key={tag}>{tag}</li>
                    ))}
                  </ul>
                </dd>
              ) : field.kind === 'html' ? (
                <dd className="html" dangerouslySetInnerHTML={{ __html: field.value }} />
              ) : field.kind === 'flag' ? (
                <dd>Yes</dd>
              ) : (
                <dd>{field.value}</dd>
              )}
            </div>
          ))}
        </dl>
      ) : null}
      {drafting.length > 0 ? (
        <section aria-labelledby="drafting">
          <h2 id="drafting">Drafting process</h2>
          <div className="gallery">
            {drafting.map((image, index) => (
              <Image
                key={image.fileId}
                image={image}
                src={imageUrl(image)}
                alt={image.description || `Drafting image ${index + 1}`}
              />
            ))}
          </div>
        </section>
      ) : null}
      <p className="note">Shared with you through a private link. Please do not pass it on.</p>
    </Page>,
  );
}

/** The password form of a protected link: it never names the portfolio. */
export function renderSharePasswordPage(options: { action: string; wrong: boolean }): string {
  return html(
    <Page title="Password needed">
      <h1>This shared portfolio needs a password</h1>
      <p>Enter the password you were given with the link.</p>
      <form method="post" action={options.action}>
        {options.wrong ? (
          <p className="error" id="password-error" role="alert">
            That password is not right. Please try again.
          </p>
        ) : null}
        <label htmlFor="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete="off"
          required
          autoFocus
          {...(options.wrong ? { 'aria-describedby': 'password-error', 'aria-invalid': true } : {})}
        />
        <button type="submit">Show the portfolio</button>
      </form>
    </Page>,
  );
}

/** A page that says why nothing is shown (unknown link, gone, too many tries). */
export function renderShareNoticePage(options: { title: string; message: string }): string {
  return html(
    <Page title={options.title}>
      <h1>{options.title}</h1>
      <p>{options.message}</p>
    </Page>,
  );
}
