// Grow-only canvases for views redrawn on every keystroke (heatmap.js, lines.js). Resizing a
// canvas reallocates its bitmap and resets its context, which made the keystroke that adds a
// token several times slower than the others. Here the bitmap only grows (with some slack), and
// a clipping box around it shows exactly the W × H px that were drawn.

export function createCanvasBox(className = '') {
  const clip = document.createElement('div');
  clip.className = `canvas-clip ${className}`.trim();
  const canvas = document.createElement('canvas');
  clip.append(canvas);
  let shown = '';
  let dpr = 0;
  return {
    clip,
    canvas,
    // Makes room for W × H css px (slack: extra px to allocate now); true when the bitmap was
    // reallocated, which also resets the 2-D context's state (font, transform, ...).
    fit(W, H, slackW = 0, slackH = 0) {
      const ratio = window.devicePixelRatio || 1;
      let resized = false;
      if (ratio !== dpr || canvas.width < W * ratio || canvas.height < H * ratio) {
        const w = Math.ceil(Math.max(W + slackW, ratio === dpr ? canvas.width / ratio : 0));
        const h = Math.ceil(Math.max(H + slackH, ratio === dpr ? canvas.height / ratio : 0));
        dpr = ratio;
        canvas.width = w * ratio;
        canvas.height = h * ratio;
        canvas.style.width = `${w}px`;
        canvas.style.height = `${h}px`;
        resized = true;
      }
      this.show(W, H);
      return resized;
    },
    // The box's size alone (W × H css px), the bitmap untouched: room taken before a paint.
    show(W, H) {
      const size = `${W}x${H}`;
      if (size !== shown) {
        shown = size;
        clip.style.width = `${W}px`;
        clip.style.height = `${H}px`;
      }
    },
  };
}
