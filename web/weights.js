// Trained weights on the page: a safetensors file (a module's state_dict, saved by
// scripts/export_state_dict.py) picked or dropped, listed tensor by tensor, and applied to the
// selected module on every recompute. The URL records only the file's name (state.weights): a
// shared link asks for the file again rather than carrying it.

// Reads a file (or any ArrayBuffer) and lists it with the core; throws the core's Error for a
// damaged file. Returns {name, bytes, tensors: [{name, dtype, shape}]}.
export function loadWeightsFromBuffer(core, name, arrayBuffer) {
  const bytes = new Uint8Array(arrayBuffer);
  return { name, bytes, tensors: core.weightsListing(bytes) };
}

// Wires the picker (input + drop zone) and renders the listing. onChange(weights | null, error)
// is called when a file was loaded, refused, or cleared. Returns {render, loadBuffer(name, bytes)}.
export function createWeightsPicker(core, els, onChange) {
  const render = (w) => {
    els.clear.hidden = !w;
    els.details.hidden = !w;
    const body = els.table.tBodies[0];
    body.replaceChildren();
    if (!w) return;
    for (const t of w.tensors) {
      const tr = body.insertRow();
      for (const text of [t.name, t.dtype, `[${t.shape.join(', ')}]`]) tr.insertCell().textContent = text;
    }
  };
  // The one way in, for a picked or dropped file and for bytes fetched elsewhere (the embed's
  // `weights` URL attribute): true when the file was loaded, false when it was refused.
  const loadBuffer = (name, arrayBuffer) => {
    try {
      const w = loadWeightsFromBuffer(core, name, arrayBuffer);
      render(w);
      onChange(w, null);
      return true;
    } catch (e) {
      render(null);
      onChange(null, new Error(`weights '${name}': ${e.message}`));
      return false;
    }
  };
  const load = async (file) => loadBuffer(file.name, await file.arrayBuffer());
  els.input.addEventListener('change', () => { if (els.input.files[0]) load(els.input.files[0]); });
  els.drop.addEventListener('dragover', (e) => { e.preventDefault(); els.drop.classList.add('dragging'); });
  els.drop.addEventListener('dragleave', () => els.drop.classList.remove('dragging'));
  els.drop.addEventListener('drop', (e) => {
    e.preventDefault();
    els.drop.classList.remove('dragging');
    if (e.dataTransfer.files[0]) load(e.dataTransfer.files[0]);
  });
  els.clear.addEventListener('click', () => {
    els.input.value = '';
    render(null);
    onChange(null, null);
  });
  return { render, loadBuffer };
}
