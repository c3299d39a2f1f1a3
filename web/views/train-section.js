// Training mode's panel and views (train/mode.js): the markup, put into index.html's empty
// #training section when the mode first opens (its CSS: mode-styles.js), so the first view carries the
// playground's only. Static text only: data-i18n keys, translated with the mode's texts.

const MARKUP = `
<div class="training-title">
  <h2 id="h-training" data-i18n="training.heading">Train a model in the page</h2>
  <button type="button" id="train-close" data-testid="train-close" data-i18n="training.close">Close training</button>
</div>
<p class="hint" data-i18n="training.intro">A small decoder-only transformer (<code>CausalTransformer</code>) learns the task in a Web Worker with the same WASM core, so the page stays responsive; every loss is the one PyTorch computes for the same model, seed and batches.</p>
<div class="train-grid">
  <div class="card train-panel" id="train-controls">
    <div class="field" data-control="train">
      <label for="train-task" data-i18n="training.task">Task</label>
      <select id="train-task" data-testid="train-task" data-train-field="train"></select>
    </div>
    <p id="train-explain" class="hint" data-testid="train-explain"></p>
    <p class="hint"><strong data-i18n="training.expect">Pattern to expect:</strong> <span id="train-pattern"></span></p>
    <div class="train-buttons" role="group" aria-label="Training" data-i18n-aria-label="training.buttons">
      <button type="button" id="train-start" data-testid="train-start" data-command="train" data-i18n="training.start" disabled>Train</button>
      <button type="button" id="train-pause" data-testid="train-pause" data-command="pause" data-i18n="training.pause" disabled>Pause</button>
      <button type="button" id="train-step" data-testid="train-step" data-command="step" data-i18n="training.stepOnce" disabled>Step once</button>
      <button type="button" id="train-reset" data-testid="train-reset" data-command="reset" data-i18n="training.reset" disabled>Reset</button>
    </div>
    <dl class="train-stats">
      <dt data-i18n="training.step">Step</dt><dd id="train-step-count" data-testid="train-step-count"></dd>
      <dt data-i18n="training.loss">Loss</dt><dd id="train-loss" data-testid="train-loss"></dd>
      <dt data-i18n="training.heldout">Held-out accuracy</dt><dd id="train-accuracy" data-testid="train-accuracy"></dd>
      <dt data-i18n="training.batchAccuracy">Accuracy on the batch</dt><dd id="train-batch-accuracy"></dd>
      <dt data-i18n="training.speed">Steps per second</dt><dd id="train-speed" data-testid="train-speed"></dd>
    </dl>
    <p id="train-status" class="train-status" role="status" data-testid="train-status"></p>
    <details class="train-settings" open>
      <summary data-i18n="training.settings">Settings</summary>
      <div class="train-fields">
        <div class="field" data-control="trainseed">
          <label for="trainseed" data-i18n="training.seed">Seed</label>
          <input id="trainseed" data-train-field="trainseed" type="number" min="0" max="4294967295" step="1" inputmode="numeric">
        </div>
        <div class="field" data-control="trainopt">
          <label for="trainopt" data-i18n="training.optimizer">Optimizer</label>
          <select id="trainopt" data-train-field="trainopt"><option value="SGD">SGD</option><option value="Adam">Adam</option><option value="AdamW">AdamW</option></select>
        </div>
        <div class="field" data-control="trainlr">
          <label for="trainlr" data-i18n="training.lr">Learning rate</label>
          <input id="trainlr" data-train-field="trainlr" type="number" min="0" max="10" step="any" inputmode="decimal">
        </div>
        <div class="field" data-control="trainbatch">
          <label for="trainbatch" data-i18n="training.batch">Batch size</label>
          <input id="trainbatch" data-train-field="trainbatch" type="number" min="1" max="1024" step="1" inputmode="numeric">
        </div>
        <div class="field" data-control="trainsteps">
          <label for="trainsteps" data-i18n="training.steps">Steps</label>
          <input id="trainsteps" data-train-field="trainsteps" type="number" min="1" max="100000" step="1" inputmode="numeric">
        </div>
      </div>
      <fieldset class="train-fields">
        <legend data-i18n="training.model">Model size</legend>
        <div class="field" data-control="trainwidth">
          <label for="trainwidth"><code>emb_dim</code></label>
          <input id="trainwidth" data-train-field="trainwidth" type="number" min="1" max="512" step="1" inputmode="numeric">
        </div>
        <div class="field" data-control="trainheads">
          <label for="trainheads"><code>num_heads</code></label>
          <input id="trainheads" data-train-field="trainheads" type="number" min="1" max="16" step="1" inputmode="numeric">
        </div>
        <div class="field" data-control="trainlayers">
          <label for="trainlayers"><code>num_layers</code></label>
          <input id="trainlayers" data-train-field="trainlayers" type="number" min="1" max="6" step="1" inputmode="numeric">
        </div>
        <div class="field" data-control="trainffn">
          <label for="trainffn"><code>ffn_dim</code></label>
          <input id="trainffn" data-train-field="trainffn" type="number" min="1" max="2048" step="1" inputmode="numeric">
        </div>
        <div class="field" data-control="trainmodel">
          <label for="trainmodel"><code>module</code></label>
          <select id="trainmodel" data-train-field="trainmodel"><option value="">CausalTransformer</option><option value="GPT">GPT</option></select>
        </div>
        <div class="field check" data-control="trainrope">
          <input id="trainrope" data-train-field="trainrope" type="checkbox"><label for="trainrope"><code>rope</code></label>
        </div>
        <div class="field" data-control="trainkvheads">
          <label for="trainkvheads"><code>num_kv_heads</code></label>
          <input id="trainkvheads" data-train-field="trainkvheads" type="number" min="0" max="16" step="1" inputmode="numeric">
        </div>
        <div class="field" data-control="trainwindow">
          <label for="trainwindow"><code>window</code></label>
          <input id="trainwindow" data-train-field="trainwindow" type="number" min="0" max="64" step="1" inputmode="numeric">
        </div>
      </fieldset>
      <p class="hint" data-i18n="training.settingsHint">A changed setting starts the run again from step 0. The settings are part of the link, so the link trains the same model with the same losses anywhere. \`module\` GPT trains nanoGPT's GPT of this size instead (its MLP is 4 × emb_dim wide, so \`ffn_dim\` does not apply), optionally Llama-style: \`rope\` instead of position embeddings, \`num_kv_heads\` (0: num_heads) and a sliding \`window\` (0: none); Show in the playground then hands it to Generate mode too, which generates with its KV cache.</p>
    </details>
    <div class="export-buttons">
      <button type="button" data-command="exportWeights" data-testid="train-export-weights" data-i18n="training.exportWeights">Weights (.safetensors)</button>
      <button type="button" data-command="exportRun" data-testid="train-export-run" data-i18n="training.exportRun">Run (JSON)</button>
      <button type="button" data-command="playground" data-testid="train-playground" data-i18n="training.toPlayground">Show in the playground</button>
      <button type="button" data-command="experiment" data-testid="train-experiment" data-i18n="training.toLab">Experiment on this model</button>
    </div>
  </div>
  <div class="train-views">
    <div class="card" role="group" aria-labelledby="h-train-chart">
      <h3 id="h-train-chart" data-i18n="training.chartHeading">Loss and accuracy</h3>
      <div id="train-chart"></div>
    </div>
    <div class="card" role="group" aria-labelledby="h-train-heads">
      <h3 id="h-train-heads" data-i18n="training.headsHeading">Attention as it learns</h3>
      <div id="train-scrubber-holder"></div>
      <div id="train-heads"></div>
      <div id="train-sample"></div>
    </div>
  </div>
</div>
`;

// The section filled (once) with the mode's markup.
export function fillSection(section) {
  if (section.childElementCount === 0) section.insertAdjacentHTML('afterbegin', MARKUP);
}
