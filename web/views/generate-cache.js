// Generate mode's KV cache (index.html #gen-cache): per layer the keys and the values, a column
// per cached position and a row per head, the column added by the latest token marked; the
// shape (1, n_head, t, head_dim) and the bytes of every layer's keys and values beside it.

const CELL = 10;

function grid(heads, t, fresh) {
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, t) * CELL;
  canvas.height = heads * CELL;
  const ctx = canvas.getContext('2d');
  for (let h = 0; h < heads; h++) {
    for (let j = 0; j < t; j++) {
      ctx.fillStyle = j >= t - fresh ? '#d9480f' : '#4c6ef5';
      ctx.fillRect(j * CELL + 1, h * CELL + 1, CELL - 2, CELL - 2);
    }
  }
  return canvas;
}

// update({layers, heads, t, fresh (positions the latest token added), labels: {k, v, layer(i)}} | null)
export function createGenCache(root) {
  return {
    update(d) {
      if (!d) { root.replaceChildren(); return; }
      root.replaceChildren(...Array.from({ length: d.layers }, (_, l) => {
        const fig = document.createElement('div');
        fig.className = 'gen-cache-layer';
        const name = document.createElement('span');
        name.textContent = d.labels.layer(l);
        const k = document.createElement('span');
        k.textContent = d.labels.k;
        const v = document.createElement('span');
        v.textContent = d.labels.v;
        fig.append(name, k, grid(d.heads, d.t, d.fresh), v, grid(d.heads, d.t, d.fresh));
        fig.setAttribute('role', 'img');
        fig.setAttribute('aria-label', `${d.labels.layer(l)}: ${d.labels.shape}`);
        return fig;
      }));
    },
  };
}
