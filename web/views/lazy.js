// Defers a view's drawing while it is scrolled out of sight: the data is current, the canvases
// are painted when the view comes within 300 px of the viewport. Used by the step cards
// (pipeline.js) and the attention view, so a keystroke repaints only what can be seen.

const MARGIN = '300px 0px';

// draw(): paints the view. Returns {request()}: call on new data; it draws now if visible.
// A view counts as visible until the observer first says otherwise, so the first paint is
// never late.
export function lazyDraw(element, draw, { initiallyVisible = true } = {}) {
  let visible = initiallyVisible;
  let dirty = false;
  const observer = new IntersectionObserver(([entry]) => {
    visible = entry.isIntersecting;
    if (visible && dirty) { dirty = false; draw(); }
  }, { rootMargin: MARGIN });
  observer.observe(element);
  // Focus or the pointer can reach a view before the observer reports it on screen (focus
  // scrolls it there): paint first, so nobody reads a stale value.
  const flush = () => { if (dirty) { dirty = false; draw(); } };
  element.addEventListener('focusin', flush);
  element.addEventListener('pointerenter', flush);
  return {
    request() {
      if (visible) { dirty = false; draw(); } else dirty = true;
    },
    disconnect() { observer.disconnect(); },
  };
}
