// The page's modes, each in its own folder: the playground (always open), training, generation,
// experiments (lab/), a Hugging Face checkpoint (model/).
// A mode declares its fields (its fields.js: merged into the one state by app/state.js, so they
// are in every link) and whether a state opens it; its code is loaded when it opens (a dynamic
// import: the first view holds the playground's only). A mode's module exports
//   start(page) -> {sync(state, prev), relabel(), stop(), summary()}
// sync: the state changed (another mode's edit, the link, a weights file: every mode reads the
// same state, never another mode's DOM); relabel: the language changed; stop: the mode closed;
// summary: what window.playground reports of it (app/hooks.js). Its views are in views/, its
// worker (if any) beside it.
import * as playground from '../playground/mode.js';
import { loadModeStyles } from '../views/mode-styles.js';

// A mode's code and its styles, both loaded before it starts.
const withStyles = async (code) => (await Promise.all([code, loadModeStyles()]))[0];

export const MODES = Object.freeze([
  { id: 'playground', open: () => true, load: async () => playground },
  { id: 'train', open: (state) => !!state.train, load: () => withStyles(import('../train/mode.js')) },
  { id: 'generate', open: (state) => !!state.generate, load: () => withStyles(import('../generate/mode.js')) },
  { id: 'experiment', open: (state) => !!state.experiment, load: () => withStyles(import('../lab/mode.js')) },
  { id: 'model', open: (state) => state.models || !!state.pretrained, load: () => withStyles(import('../model/mode.js')) },
]);
