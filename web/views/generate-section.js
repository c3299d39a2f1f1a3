// Generate mode's panel and views (generate/mode.js): the markup, put into index.html's empty
// #generation section when the mode first opens (its CSS: mode-styles.js), so the first view carries the
// playground's only. Static text only: data-i18n keys, translated with the mode's texts.

const MARKUP = `
<div class="training-title">
  <h2 id="h-generation" data-i18n="gen.heading">Generate text with a GPT</h2>
  <button type="button" id="gen-close" data-testid="generate-close" data-i18n="gen.close">Close generation</button>
</div>
<p class="hint" data-i18n="gen.intro">nanoGPT's GPT continues a prompt one character at a time, with the same ids PyTorch draws for the same seed. Each new token's attention over everything before it, the probabilities it was drawn from, and the KV cache it fills are drawn as it grows.</p>
<div class="train-grid">
  <div class="card train-panel" id="gen-controls">
    <div class="field" data-control="genmodel">
      <label for="genmodel" data-i18n="gen.model">Model</label>
      <select id="genmodel" data-gen-field="genmodel" data-testid="generate-model-select">
        <option value="" data-i18n="gen.modelLm">The shipped model (fortunes)</option>
        <option value="seeded" data-i18n="gen.modelSeededOption">A seeded GPT (settings below)</option>
      </select>
    </div>
    <p id="gen-model" class="hint" data-testid="generate-model"></p>
    <div class="field" data-control="genprompt">
      <label for="gen-prompt" data-i18n="gen.prompt">Prompt</label>
      <input id="gen-prompt" data-testid="generate-prompt" data-gen-field="genprompt" type="text" autocomplete="off" spellcheck="false">
    </div>
    <div class="train-buttons" role="group" aria-label="Generation" data-i18n-aria-label="gen.buttons">
      <button type="button" data-testid="generate-step" data-gen-command="step" data-i18n="gen.step" disabled>Step</button>
      <button type="button" data-testid="generate-run" data-gen-command="run" id="gen-run" disabled>Run to N</button>
      <button type="button" data-testid="generate-reset" data-gen-command="reset" data-i18n="gen.reset">Reset</button>
    </div>
    <p id="gen-status" class="train-status" role="status" data-testid="generate-status"></p>
    <p id="gen-prompt-ids" class="hint" data-testid="generate-prompt-ids"></p>
    <div class="gen-sliders">
      <div class="field" data-control="gentemp">
        <label for="gentemp"><span data-i18n="gen.temperature">Temperature</span> <output id="gentemp-out" for="gentemp"></output></label>
        <input id="gentemp" data-gen-slider="gentemp" data-testid="generate-temperature" type="range" min="0" max="2" step="0.05">
      </div>
      <div class="field" data-control="gentopk">
        <label for="gentopk"><code>top_k</code> <output id="gentopk-out" for="gentopk"></output></label>
        <input id="gentopk" data-gen-slider="gentopk" data-testid="generate-top-k" type="range" min="0" step="1">
      </div>
      <div class="field" data-control="gentopp">
        <label for="gentopp"><code>top_p</code> <output id="gentopp-out" for="gentopp"></output></label>
        <input id="gentopp" data-gen-slider="gentopp" data-testid="generate-top-p" type="range" min="0" max="1" step="0.05">
      </div>
      <p class="hint" data-i18n="gen.slidersHint">0 turns \`top_k\` and \`top_p\` off; temperature 0 is greedy decoding. Moving a slider redraws the bars from the last logits at once and, when released, generates again from the prompt with the same seed.</p>
    </div>
    <details class="train-settings">
      <summary data-i18n="gen.settings">Settings</summary>
      <div class="train-fields">
        <div class="field" data-control="genmax">
          <label for="genmax"><code>max_new_tokens</code></label>
          <input id="genmax" data-gen-field="genmax" type="number" min="1" max="1024" step="1" inputmode="numeric">
        </div>
        <div class="field check" data-control="gencache">
          <input id="gencache" data-gen-field="gencache" type="checkbox">
          <label for="gencache" data-i18n="gen.cache">KV cache</label>
        </div>
        <div class="field" data-control="genseed">
          <label for="genseed" data-i18n="gen.seed">Seed</label>
          <input id="genseed" data-gen-field="genseed" type="number" min="0" max="4294967295" step="1" inputmode="numeric">
        </div>
      </div>
      <fieldset class="train-fields" id="gen-model-fields">
        <legend data-i18n="gen.modelSize">Seeded model</legend>
        <div class="field" data-control="genvocab"><label for="genvocab"><code>vocab_size</code></label><input id="genvocab" data-gen-field="genvocab" type="number" min="2" max="88" step="1" inputmode="numeric"></div>
        <div class="field" data-control="genblock"><label for="genblock"><code>block_size</code></label><input id="genblock" data-gen-field="genblock" type="number" min="1" max="1024" step="1" inputmode="numeric"></div>
        <div class="field" data-control="genlayers"><label for="genlayers"><code>n_layer</code></label><input id="genlayers" data-gen-field="genlayers" type="number" min="1" max="12" step="1" inputmode="numeric"></div>
        <div class="field" data-control="genheads"><label for="genheads"><code>n_head</code></label><input id="genheads" data-gen-field="genheads" type="number" min="1" max="16" step="1" inputmode="numeric"></div>
        <div class="field" data-control="genembd"><label for="genembd"><code>n_embd</code></label><input id="genembd" data-gen-field="genembd" type="number" min="1" max="1024" step="1" inputmode="numeric"></div>
        <div class="field check" data-control="genbias"><input id="genbias" data-gen-field="genbias" type="checkbox"><label for="genbias"><code>bias</code></label></div>
        <div class="field check" data-control="genrope"><input id="genrope" data-gen-field="genrope" type="checkbox"><label for="genrope"><code>rope</code></label></div>
        <div class="field" data-control="genkvheads"><label for="genkvheads"><code>num_kv_heads</code></label><input id="genkvheads" data-gen-field="genkvheads" type="number" min="0" max="16" step="1" inputmode="numeric"></div>
        <div class="field" data-control="genwindow"><label for="genwindow"><code>window</code></label><input id="genwindow" data-gen-field="genwindow" type="number" min="0" max="1024" step="1" inputmode="numeric"></div>
      </fieldset>
      <p class="hint" data-i18n="gen.settingsHint">The settings are part of the link. With a GPT file loaded in the weights picker (module \`GPT\`, its config in the module form), Generate mode uses that file and its vocabulary instead of the seeded model.</p>
    </details>
  </div>
  <div class="train-views">
    <div class="card" role="group" aria-labelledby="h-gen-text">
      <h3 id="h-gen-text" data-i18n="gen.textHeading">The sequence</h3>
      <p id="gen-text" class="gen-text" data-testid="generate-text"></p>
    </div>
    <div class="card" role="group" aria-labelledby="h-gen-rows">
      <h3 id="h-gen-rows" data-i18n="gen.rowsHeading">Each new token's attention over everything before it</h3>
      <div class="field gen-layer"><label for="gen-layer" data-i18n="gen.layer">Layer</label> <select id="gen-layer" data-testid="generate-layer"></select></div>
      <div id="gen-rows" class="gen-rows" data-testid="generate-rows"></div>
    </div>
    <div class="card" role="group" aria-labelledby="h-gen-probs">
      <h3 id="h-gen-probs" data-i18n="gen.probsHeading">The next token: the ten most probable</h3>
      <div id="gen-probs" class="gen-probs" data-testid="generate-probs"></div>
    </div>
    <div class="card" role="group" aria-labelledby="h-gen-cache">
      <h3 id="h-gen-cache" data-i18n="gen.cacheHeading">KV cache</h3>
      <p><code id="gen-cache-shape" data-testid="generate-cache-shape"></code> <span id="gen-cache-bytes" data-testid="generate-cache-bytes"></span></p>
      <div id="gen-cache" class="gen-cache"></div>
      <p class="hint" data-i18n="gen.prefillDecode">Prefill: the prompt's tokens run through the model at once, and every layer keeps their keys and values, (1, n_head, T, head_dim) each (num_kv_heads heads instead of n_head with grouped-query attention; with a window every position stays cached and the ones out of it are masked). Decode: each new token then computes only its own q, k and v, appends k and v to the cache, and its query reads one row of attention over all cached keys. Without the cache every token recomputes the whole window.</p>
    </div>
    <div class="card" role="group" aria-labelledby="h-gen-times">
      <h3 id="h-gen-times" data-i18n="gen.timesHeading">Time per token, with and without the cache</h3>
      <table class="gen-times" data-testid="generate-times"><tbody id="gen-times"></tbody></table>
      <p id="gen-check" data-testid="generate-check"></p>
    </div>
  </div>
</div>
`;

// The section filled (once) with the mode's markup.
export function fillSection(section) {
  if (section.childElementCount === 0) section.insertAdjacentHTML('afterbegin', MARKUP);
}
