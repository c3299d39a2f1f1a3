// "Open a model"'s panel (model/mode.js): the markup, put into index.html's empty #models section
// when the mode first opens (its CSS: modes.css, loaded with the mode). Static text only: data-i18n
// keys, translated with the mode's texts (locales/model.*.js).

const MARKUP = `
<div class="training-title">
  <h2 id="h-models" data-i18n="hub.heading">Open a model</h2>
  <button type="button" id="model-close" data-testid="model-close" data-i18n="hub.close">Close</button>
</div>
<p class="hint" data-i18n="hub.intro">A GPT-2 or Llama-family checkpoint as the Hugging Face Hub serves it (config.json, model.safetensors or its shards, the tokenizer files), computed by the core in this tab.</p>
<div class="train-grid">
  <div class="card train-panel">
    <div class="field">
      <label for="model-url" data-i18n="hub.url">Address of a model folder</label>
      <input id="model-url" data-testid="model-url" type="url" autocomplete="off" spellcheck="false" placeholder="https://huggingface.co/openai-community/gpt2/resolve/main/">
    </div>
    <div class="train-buttons">
      <button type="button" id="model-url-open" data-testid="model-url-open" data-i18n="hub.openUrl">Open the address</button>
      <button type="button" id="model-cancel" data-testid="model-cancel" data-i18n="hub.cancel" disabled>Cancel</button>
    </div>
    <div id="model-drop" class="model-drop" data-testid="model-drop">
      <p data-i18n="hub.drop">Or drop a model folder (or its files) here, or pick them:</p>
      <label class="model-pick"><span data-i18n="hub.pickFiles">Files…</span> <input id="model-files" data-testid="model-files" type="file" multiple></label>
      <label class="model-pick"><span data-i18n="hub.pickFolder">A folder…</span> <input id="model-folder" data-testid="model-folder" type="file" webkitdirectory></label>
    </div>
    <div id="model-progress-box" class="model-progress" hidden>
      <progress id="model-progress" data-testid="model-progress" max="1" value="0"></progress>
      <p id="model-progress-text" class="hint" data-testid="model-progress-text" aria-live="polite"></p>
    </div>
    <p id="model-status" class="hint" data-testid="model-status" role="status"></p>
    <p id="model-error" class="error-text" role="alert" data-testid="model-error" hidden></p>
    <dl id="model-card" class="train-stats" data-testid="model-card"></dl>
  </div>
  <div class="train-views">
    <div class="card">
      <div class="field">
        <label for="model-text" data-i18n="hub.sentence">Sentence</label>
        <input id="model-text" data-testid="model-text" type="text" autocomplete="off" spellcheck="false">
      </div>
      <ul id="model-tokens" class="chips" data-testid="model-tokens" aria-label="Tokens" data-i18n-aria-label="hub.tokens"></ul>
      <p id="model-next" class="hint" data-testid="model-next"></p>
      <div class="train-buttons">
        <button type="button" id="model-generate" data-testid="model-generate" data-i18n="hub.generate">Continue the sentence (16 tokens, greedy)</button>
      </div>
      <p id="model-generated" data-testid="model-generated"></p>
      <div class="train-buttons">
        <button type="button" id="model-lens" data-testid="model-lens" data-i18n="hub.lens">Logit lens: what each layer predicts next</button>
      </div>
      <table id="model-lens-table" class="lens-table" data-testid="model-lens-table" hidden></table>
    </div>
    <div class="card" role="group" aria-labelledby="h-model-patch">
      <h3 id="h-model-patch" data-i18n="hub.patchHeading">Patching: which heads carry the answer</h3>
      <p class="hint" data-i18n="hub.patchHint"></p>
      <div class="field">
        <label for="model-corrupt" data-i18n="hub.corrupt">Corrupted sentence (the same number of tokens)</label>
        <input id="model-corrupt" data-testid="model-corrupt" type="text" autocomplete="off" spellcheck="false">
      </div>
      <div class="train-buttons">
        <button type="button" id="model-patch" data-testid="model-patch" data-i18n="hub.patch">Patch every head</button>
      </div>
      <p id="model-patch-note" class="hint" data-testid="model-patch-note" aria-live="polite"></p>
      <div id="model-patch-result" class="lab-pair" data-testid="model-patch-result" hidden>
        <figure class="lab-figure" data-testid="model-patching"><figcaption data-i18n="hub.patchHeads"></figcaption></figure>
        <figure class="lab-figure" data-testid="model-attribution"><figcaption data-i18n="hub.attrHeads"></figcaption></figure>
        <figure class="lab-figure" data-testid="model-dla"><figcaption data-i18n="hub.dlaHeads"></figcaption></figure>
      </div>
      <p id="model-dla-others" class="hint" data-testid="model-dla-others"></p>
    </div>
    <div class="card" role="group" aria-labelledby="h-model-grid">
      <h3 id="h-model-grid" data-i18n="hub.gridHeading">Every layer and head</h3>
      <p class="hint" data-i18n="hub.gridHint">Each tile is one head's attention on the sentence (rows: queries, columns: keys). Press one to open it.</p>
      <div class="train-buttons">
        <button type="button" id="model-ablate-mode" data-testid="model-ablate-mode" aria-pressed="false" data-i18n="hub.ablateMode">Switch heads off: a press switches a head off or on</button>
        <button type="button" id="model-ablate-reset" data-testid="model-ablate-reset" data-i18n="hub.ablateReset">Switch every head on</button>
      </div>
      <div id="model-grid" class="lab-heads" data-testid="model-grid"></div>
    </div>
    <div class="card" role="group" aria-labelledby="h-model-head">
      <h3 id="h-model-head" data-testid="model-head-title"></h3>
      <div id="model-head" data-testid="model-head"></div>
    </div>
  </div>
</div>
`;

export function fillSection(section) {
  if (section.childElementCount === 0) section.insertAdjacentHTML('afterbegin', MARKUP);
}
