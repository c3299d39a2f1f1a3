// Experiments mode's panel and views (lab/mode.js): the markup, put into index.html's empty
// #experiments section when the mode first opens (its CSS: modes.css, loaded with the mode).
// Static text only: data-i18n keys, translated with the mode's texts (locales/lab.*.js).

const MARKUP = `
<div class="training-title">
  <h2 id="h-experiments" data-i18n="lab.heading">Experiments: what do the heads do?</h2>
  <button type="button" id="lab-close" data-testid="exp-close" data-i18n="lab.close">Close experiments</button>
</div>
<p class="hint" data-i18n="lab.intro">Switch a head off and watch the model's accuracy; patch a clean activation into a corrupted run; read each layer's guess through the logit lens. Every number is computed by the core, in this tab.</p>
<p id="lab-model" class="hint" data-testid="exp-model"></p>
<p id="lab-error" class="error-text" role="alert" data-testid="exp-error" hidden></p>
<div class="train-grid">
  <div class="card train-panel" id="lab-controls">
    <div class="field" data-control="expclean">
      <label for="lab-clean" data-i18n="lab.clean">Clean sequence</label>
      <input id="lab-clean" data-testid="exp-clean" data-lab-field="expclean" type="text" autocomplete="off" spellcheck="false">
    </div>
    <div class="field" data-control="expcorrupt">
      <label for="lab-corrupted" data-i18n="lab.corrupted">Corrupted sequence</label>
      <input id="lab-corrupted" data-testid="exp-corrupted" data-lab-field="expcorrupt" type="text" autocomplete="off" spellcheck="false">
    </div>
    <div class="field" data-control="exppos">
      <label for="lab-pos" data-i18n="lab.position">Answer position</label>
      <select id="lab-pos" data-testid="exp-position" data-lab-field="exppos"></select>
    </div>
    <p id="lab-answer" class="hint" data-testid="exp-answer"></p>
    <div class="field check" data-control="expmean">
      <input id="lab-mean" data-lab-field="expmean" type="checkbox">
      <label for="lab-mean" data-i18n="lab.mean">Mean ablation (the head's mean output instead of zero)</label>
    </div>
    <dl class="train-stats" id="lab-metric" data-testid="exp-metric" aria-live="polite"></dl>
    <div class="train-buttons">
      <button type="button" id="lab-rank-run" data-testid="exp-rank-run" data-i18n="lab.rankRun" disabled>Rank the heads</button>
      <button type="button" id="lab-reset" data-testid="exp-reset" data-i18n="lab.reset">Switch every head on</button>
    </div>
    <p class="hint" data-i18n="lab.inputsHint">A sequence is typed one token per character; the model reads all but the last character, and each position's answer is the character after it. The corrupted sequence changes the token the answer is read from, so its answer differs.</p>
  </div>
  <div class="train-views">
    <div class="card" role="group" aria-labelledby="h-lab-heads">
      <h3 id="h-lab-heads" data-i18n="lab.headsHeading">Heads: press one to switch it off</h3>
      <p class="hint" data-i18n="lab.headsHint">Each tile is a head's attention on the clean sequence, with the pattern it shows over the held-out sequences. A pressed tile's output is zeroed (or set to its mean) in every forward: the numbers update.</p>
      <div id="lab-heads" class="lab-heads" data-testid="exp-heads"></div>
    </div>
    <div class="card" role="group" aria-labelledby="h-lab-rank">
      <h3 id="h-lab-rank" data-i18n="lab.rankHeading">Which heads matter</h3>
      <div id="lab-rank" data-testid="exp-rank"></div>
    </div>
    <div class="card" role="group" aria-labelledby="h-lab-views">
      <h3 id="h-lab-views" data-i18n="lab.viewsHeading">Patching, logit lens, attribution</h3>
      <div class="lab-tabs" role="group" aria-label="View" data-i18n-aria-label="lab.views">
        <button type="button" data-lab-view="patching" data-testid="exp-view-patching" data-i18n="lab.viewPatching">Patching</button>
        <button type="button" data-lab-view="lens" data-testid="exp-view-lens" data-i18n="lab.viewLens">Logit lens</button>
        <button type="button" data-lab-view="dla" data-testid="exp-view-dla" data-i18n="lab.viewDla">Direct logit attribution</button>
      </div>
      <p id="lab-metric-note" class="hint" data-testid="exp-analysis-note"></p>
      <div data-lab-panel="patching">
        <p class="hint" data-i18n="lab.patchingHint">Activation patching: each cell runs the corrupted sequence with that cell's activation taken from the clean run, and shows how much of the logit difference comes back. Attribution patching estimates the same from one backward pass.</p>
        <div class="lab-pair">
          <figure class="lab-figure" data-testid="exp-patching"><figcaption data-i18n="lab.patchHeads">Activation patching, layer × head</figcaption></figure>
          <figure class="lab-figure" data-testid="exp-attribution"><figcaption data-i18n="lab.attrHeads">Attribution patching, layer × head</figcaption></figure>
        </div>
        <p id="lab-corr-heads" data-testid="exp-correlation-heads"></p>
        <div class="lab-pair">
          <figure class="lab-figure" data-testid="exp-patching-residual"><figcaption data-i18n="lab.patchResidual">Activation patching, residual stream × position</figcaption></figure>
          <figure class="lab-figure" data-testid="exp-attribution-residual"><figcaption data-i18n="lab.attrResidual">Attribution patching, residual stream × position</figcaption></figure>
        </div>
        <p id="lab-corr-residual" data-testid="exp-correlation-residual"></p>
      </div>
      <div data-lab-panel="lens">
        <p class="hint" data-i18n="lab.lensHint">The logit lens reads the residual stream after each part of the model as if it were the last: the top token at each position, shaded by its probability. The outlined cell is the answer position; a check mark says the right answer is on top.</p>
        <div id="lab-lens" data-testid="exp-lens"></div>
      </div>
      <div data-lab-panel="dla">
        <p class="hint" data-i18n="lab.dlaHint">Direct logit attribution splits the clean answer's logit difference at the answer position into what each component wrote into the residual stream: the embeddings, each head, each MLP and the biases. The parts add up to the total.</p>
        <div id="lab-dla" data-testid="exp-dla"></div>
      </div>
    </div>
  </div>
</div>
`;

export function fillSection(section) {
  if (section.childElementCount === 0) section.insertAdjacentHTML('afterbegin', MARKUP);
}
