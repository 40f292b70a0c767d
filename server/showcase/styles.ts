/**
 * The showcase's one stylesheet, served from /showcase/assets/ (the CSP allows no inline style).
 * Mobile first; a print section lays a portfolio out for paper.
 */
export const SHOWCASE_CSS = `
:root { color-scheme: light; --ink: #1c1d21; --muted: #4d5360; --line: #d9dce3; --accent: #174ea6; --paper: #fff; --soft: #f4f5f8; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 1rem/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--paper); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible { outline: 3px solid #e8a400; outline-offset: 2px; }
img { max-width: 100%; height: auto; display: block; }
.skip { position: absolute; left: -999rem; }
.skip:focus { left: 1rem; top: 1rem; background: var(--paper); padding: .5rem 1rem; z-index: 1; }
header.site, footer.site, main { max-width: 72rem; margin: 0 auto; padding: 0 1rem; }
header.site { padding-top: 1rem; padding-bottom: 1rem; border-bottom: 1px solid var(--line); }
.brand { display: inline-flex; align-items: center; gap: .6rem; font-weight: 700; font-size: 1.15rem; color: var(--ink); text-decoration: none; }
.logo { width: 40px; height: 40px; object-fit: contain; }
footer.site { margin-top: 3rem; padding-top: 1rem; padding-bottom: 2rem; border-top: 1px solid var(--line); color: var(--muted); }
h1 { font-size: 1.9rem; line-height: 1.2; margin: 1.25rem 0 .5rem; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
.lines { white-space: pre-line; overflow-wrap: anywhere; }
.search { margin: 1rem 0; }
.search label { display: block; font-weight: 600; margin-bottom: .25rem; }
.search-row { display: flex; gap: .5rem; }
.search input { flex: 1; min-width: 0; font: inherit; padding: .55rem .7rem; border: 1px solid #767b87; border-radius: .4rem; }
.search button { font: inherit; padding: .55rem 1rem; border: 0; border-radius: .4rem; background: var(--accent); color: #fff; cursor: pointer; }
.browse { display: grid; gap: .25rem 2rem; }
.browse h2 { font-size: 1rem; margin: .75rem 0 .35rem; }
.tags { list-style: none; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: .4rem; }
.tags li { background: var(--soft); border-radius: 1rem; padding: .15rem .7rem; }
.tags a { text-decoration: none; display: inline-block; padding: .2rem 0; }
.tags a[aria-current="page"] { font-weight: 700; text-decoration: underline; }
.count { color: var(--muted); font-weight: 400; }
.grid { list-style: none; padding: 0; margin: 0; display: grid; gap: 1.25rem; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); }
.card a { text-decoration: none; color: var(--ink); display: block; }
.card img, .no-image { aspect-ratio: 4 / 3; width: 100%; object-fit: cover; border-radius: .5rem; background: var(--soft); }
.no-image { display: flex; align-items: center; justify-content: center; color: var(--muted); }
.card-title { display: block; font-weight: 650; margin-top: .5rem; overflow-wrap: anywhere; }
.card-meta { color: var(--muted); font-size: .95rem; }
.pick { color: #8a4b00; }
.pager { display: flex; gap: 1.5rem; margin: 1.5rem 0; }
.pager a { padding: .5rem 0; }
.crumbs { margin: 1rem 0 0; color: var(--muted); }
.cover { margin: 1rem 0; }
.cover img { border-radius: .5rem; width: 100%; }
figcaption { color: var(--muted); font-size: .95rem; margin-top: .35rem; }
.original { display: inline-block; margin-top: .35rem; }
.facts { display: grid; grid-template-columns: 1fr; gap: .2rem 1.5rem; margin: 1.5rem 0; }
.facts dt { font-weight: 600; margin-top: .5rem; }
.facts dd { margin: 0; }
.html { overflow-wrap: anywhere; }
.process { list-style: none; padding: 0; margin: 0; display: grid; gap: 1rem; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); }
.process figure { margin: 0; }
.process img { border-radius: .4rem; }
@media (min-width: 40rem) {
  h1 { font-size: 2.4rem; }
  .browse { grid-template-columns: 1fr 1fr; }
  .facts { grid-template-columns: max-content 1fr; }
  .facts dt { margin-top: 0; }
}
@media print {
  header.site, footer.site, .search, .browse, .pager, .skip, .crumbs, .original { display: none; }
  body { font-size: 11pt; }
  a { color: inherit; text-decoration: none; }
  .grid, .process { grid-template-columns: 1fr 1fr; }
  .card, figure { break-inside: avoid; }
}
`;
