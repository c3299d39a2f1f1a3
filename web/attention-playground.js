// <attention-playground>: a configured playground in a course page, in two lines of HTML:
//   <script type="module" src="https://your.host/attention-playground/attention-playground.js"></script>
//   <attention-playground preset="journey"></attention-playground>
// Attributes (all optional): every field of a playground link (web/state.js), among them text,
// text2, module, preset, config (JSON of the module's arguments, e.g. '{"d_model": 64, "num_heads": 4}'),
// seed, causal, train, tokenizer, backend, hide (controls to hide, comma-separated: "module,seed"),
// steps (the step cards shown, comma-separated step names), step (the selected one), head, lang,
// embed (compact: no page header; on by default); plus height (CSS length) and src (a JSON file of
// the same fields, e.g. {"module": "...", "config": {...}, "text": "..."}). The page's
// Share / Embed dialog writes the element for the view on screen.
// Each element is the full page (index.html beside this script) in an iframe inside its own
// shadow root: no CSS leaks in or out, any number of them on one page, each with its own core.
// A demo loads when it comes within a screen's height of the viewport (a lesson's first view
// loads the demos a student sees, not the whole lesson's: each is a page with its own core).
// Works under `default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'`.
import { schema } from './app/state.js';

// Beside this script (built from a string so that bundlers leave the page itself alone).
const PAGE = new URL('index.html', import.meta.url.replace(/[^/]*$/, ''));
const FIELDS = ['preset', ...Object.keys(schema).filter((key) => key !== 'config')];

function linkFor(fields) {
  const params = new URLSearchParams();
  for (const key of FIELDS) if (fields[key] !== undefined && fields[key] !== null) params.set(key, String(fields[key]));
  if (fields.config !== undefined) {
    if (!fields.module) throw new Error('config needs a module attribute: config holds that module\'s arguments');
    const args = typeof fields.config === 'string' ? JSON.parse(fields.config) : fields.config;
    params.set('config', JSON.stringify({ [fields.module]: args }));
  }
  if (!params.has('embed')) params.set('embed', '1');
  return `${PAGE.href}#${params}`;
}

class AttentionPlaygroundElement extends HTMLElement {
  // HTML lower-cases attribute names (seqT is seqt); getAttribute does the same to its argument.
  static get observedAttributes() { return [...FIELDS, 'config', 'src', 'height'].map((a) => a.toLowerCase()); }

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    this.frame = document.createElement('iframe');
    this.frame.title = 'Attention Playground';
    // CSSOM, not style attributes: allowed by style-src 'self'.
    Object.assign(this.frame.style, { width: '100%', border: '1px solid #dde1e8', borderRadius: '8px', display: 'block' });
    this.message = document.createElement('p');
    this.message.setAttribute('role', 'alert');
    this.message.hidden = true;
    root.append(this.frame, this.message);
    this.near = typeof IntersectionObserver === 'undefined';
    this.pending = null;   // the link to load once near the viewport
  }

  // Loads `link` now if the element is near the viewport, else when it comes near.
  show(link) {
    if (this.near) { this.frame.src = link; return; }
    this.pending = link;
    this.observer ??= new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      this.near = true;
      this.observer.disconnect();
      if (this.pending) this.frame.src = this.pending;
    }, { rootMargin: '100% 0px' });
    this.observer.observe(this);
  }

  connectedCallback() { this.render(); }
  attributeChangedCallback() { if (this.isConnected) this.render(); }

  async render() {
    const fields = {};
    for (const key of [...FIELDS, 'config']) if (this.hasAttribute(key)) fields[key] = this.getAttribute(key);
    try {
      if (this.hasAttribute('src')) {
        const r = await fetch(new URL(this.getAttribute('src'), document.baseURI));
        if (!r.ok) throw new Error(`cannot load ${this.getAttribute('src')}: HTTP ${r.status}`);
        const fromFile = await r.json();
        for (const key of [...FIELDS, 'config']) if (fromFile[key] !== undefined && fields[key] === undefined) fields[key] = fromFile[key];
      }
      this.frame.style.height = this.getAttribute('height') ?? '900px';
      this.show(linkFor(fields));
      this.message.hidden = true;
    } catch (e) {
      this.message.textContent = `attention-playground: ${e.message}`;  // as text, never markup
      this.message.hidden = false;
    }
  }

  // The iframe's page API (window.playground of the page) once it is ready.
  get playground() { return this.frame.contentWindow?.playground ?? null; }
}

if (!customElements.get('attention-playground')) customElements.define('attention-playground', AttentionPlaygroundElement);
export { AttentionPlaygroundElement, linkFor };
