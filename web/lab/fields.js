// Experiments mode's fields of the one state (app/state.js): the task whose model is questioned
// ('' = the mode is closed), where the model comes from ('' = the task's shipped model,
// web/public/models/<task>/; 'trained' = the one training mode has in this tab; 'file' = the weights
// picker's file, whose metadata names the task), the heads switched off ("layer.head,..."), mean
// instead of zero ablation, the clean and corrupted sequences ('' = the task's sample and the
// corruption the page proposes), the answer's position (-1 = the last) and the view open below the heads.
import { TASK_IDS } from '../train/fields.js';

export const LAB_VIEWS = Object.freeze(['patching', 'lens', 'dla']);

export const fields = {
  experiment: { type: 'enum', values: ['', ...TASK_IDS], default: '' },
  expsource: { type: 'enum', values: ['', 'trained', 'file'], default: '' },
  ablate: { type: 'string', default: '' },
  expmean: { type: 'bool', default: false },
  expclean: { type: 'string', default: '' },
  expcorrupt: { type: 'string', default: '' },
  exppos: { type: 'int', default: -1, min: -1, max: 1023, label: 'position' },
  expview: { type: 'enum', values: LAB_VIEWS, default: 'patching' },
};
