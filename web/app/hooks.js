// window.playground: what tests, scripts/measure-*.mjs and course pages read of a live page. Every
// name is used from outside: keep them and their behaviour. getPage() is null until the core has
// loaded; each mode's part comes from its summary() (app/modes.js), null while the mode is closed.
export function exposeHooks(getPage) {
  const mode = (id) => getPage()?.modes.get(id)?.summary() ?? null;
  const pg = () => mode('playground');
  window.playground = {
    // The latest result of either card (the pipeline's or the softmax card's), and each one's.
    result: () => pg()?.results.latest ?? null,
    pipelineResult: () => pg()?.results.pipeline ?? null,
    softmaxResult: () => pg()?.results.softmax ?? null,
    get backend() { return pg()?.backend; },        // backend.js's panel: compare, gpu(), last(), idle()
    get core() { return getPage()?.core; },         // the loaded WASM core (bindings/attention.mjs API)
    // The link of the view on screen, written into the address bar first.
    link: () => getPage().link.now(),
    state: () => structuredClone(getPage().state),
    // The WASM heap: memory size and bytes malloc holds now (soak tests watch both for growth).
    heap: () => ({ wasmMemoryBytes: getPage().core.heapBytes(), wasmMallocBytes: getPage().core.heapUsed() }),
    plan: () => pg()?.last?.plan ?? null,           // scenario.js's frozen plan of the last good run
    // Compare mode (compare.js compareData): {args, steps, weights {max, count, n} | null, output
    // {name, max, count, n} | null} of the configurations A and B as drawn; null when it is off.
    compare: () => {
      const d = getPage()?.state.compare ? pg()?.views.compare?.data() : null;
      if (!d) return null;
      const pick = (x) => x && { max: x.max, count: x.count, n: x.n, ...(x.name ? { name: x.name } : {}) };
      return structuredClone({ args: d.args, steps: d.steps, weights: pick(d.diff), output: pick(d.output) });
    },
    // Training mode: {task, step, losses (every step's), accuracy (the latest held-out one, or
    // null), stepsPerSecond, running}; null before the core loaded or while training is closed.
    training: () => mode('train')?.training() ?? null,
    // The latest snapshot's heads: [{layer, head, scores (train/patterns.js), labels}].
    trainingHeads: () => mode('train')?.heads() ?? [],
    // Every evaluation so far: [{step, heldoutAccuracy, trainAccuracy}] (every evalEvery steps).
    trainingAccuracies: () => structuredClone(mode('train')?.accuracies() ?? []),
    // Generate mode: {ids (prompt + generated), steps (tokens generated), cacheShape ((1, n_head, t,
    // head_dim) of the KV cache), cacheBytesPerToken, running}; null outside the mode or without a session.
    generation: () => structuredClone(mode('generate')?.generation() ?? null),
    // Experiments mode: {task, source, ablated: [[layer, head]], accuracy, baseline_accuracy, loss,
    // prob, ranking: [{layer, head, accuracy}] (empty until ranked), patching: {cells, ...}, lens,
    // dla, inputs, latencyMs (the last press to its numbers)}; null outside the mode or before its numbers.
    experiment: () => structuredClone(mode('experiment')?.experiment() ?? null),
    // "Open a model": {label, url, model_type, module, layers, heads, parameters, f32_bytes,
    // tokenizer, buildMs, text, ids, pieces, next: [{id, piece, prob}], generated, loading, error};
    // null outside the mode or before a model is open. modelMap(l, h): that head's T x T map as drawn.
    model: () => structuredClone(mode('model')?.model() ?? null),
    modelMap: (l, h) => mode('model')?.map(l, h) ?? null,
  };
}
