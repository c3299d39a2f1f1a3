// Generate mode's sequence (index.html #gen-text): the prompt's characters, then each generated
// one, marked apart; and the prompt's ids under it.
import { t } from '../i18n.js';

// update({tokens: [text], promptLength, promptIds}) | update(null): nothing yet.
export function createGenText(root, idsLine) {
  return {
    update(v) {
      if (!v) { root.replaceChildren(); idsLine.textContent = ''; return; }
      root.replaceChildren(...v.tokens.map((tok, i) => {
        const span = document.createElement('span');
        span.className = i < v.promptLength ? 'gen-prompt-tok' : 'gen-new-tok';
        span.textContent = tok === '\n' ? '↵\n' : tok;   // the running text: spaces as they are
        return span;
      }));
      idsLine.textContent = t('gen.promptIds', { n: v.promptIds.length, ids: v.promptIds.join(' ') });
    },
  };
}
