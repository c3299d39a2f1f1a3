// Training and Generate mode's CSS (modes.css), added when either first opens, so the first view
// carries the playground's styles only. A <link>, not a CSS import: under `npm start` Vite would
// inject an imported stylesheet as an inline <style>, which the page's policy (style-src 'self')
// refuses. In the notebook's one-file page the URL is a data: URL and its policy allows inline
// styles only: there the text goes into a <style>. Resolves once the styles apply (or failed to
// load: the mode then works unstyled rather than not at all).
let loaded = null;

function addStyles(href) {
  if (href.startsWith('data:')) {
    return fetch(href).then((r) => r.text()).then((css) => {
      const style = document.createElement('style');
      style.textContent = css;
      document.head.append(style);
    }, () => {});
  }
  return new Promise((resolve) => {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = href;
    link.onload = link.onerror = () => resolve();
    document.head.append(link);
  });
}

export function loadModeStyles() {
  loaded ??= addStyles(new URL('./modes.css', import.meta.url).href);
  return loaded;
}
