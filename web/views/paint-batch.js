// Canvas painting after the DOM writes of a redraw. A 2-D canvas's text brings style and layout
// up to date first (the page is a size container: style.css `container: page`), so a heatmap
// painted between a redraw's DOM writes forced a layout per keystroke, and the frame laid out again.
// page.js runs a recompute inside paintsLast(); heatmap.js and lines.js hand their canvas work
// to paintSoon(), which defers it to the end of that recompute, or runs it now outside one.

let pending = null;   // view -> its latest paint, while a batch is open

// paint() now, or at the end of the open batch (a view's later paint in a batch replaces its earlier one).
export function paintSoon(view, paint) {
  if (pending) pending.set(view, paint);
  else paint();
}

// fn() with the canvases it asks for painted once it is done (nested batches join the outer one).
export function paintsLast(fn) {
  if (pending) return fn();
  pending = new Map();
  try {
    return fn();
  } finally {
    const paints = pending;
    pending = null;
    for (const paint of paints.values()) paint();
  }
}
