// "Open a model"'s fields of the one state (app/state.js): the panel open, the https address of
// the model folder the page opened ('' = none, or files picked from the disk, which a link cannot
// carry: the link then opens the panel and asks for them again), the sentence ('' = the default for
// the folder's tokenizer), the head open in the large view ("layer.head", '' = none) and the heads
// switched off ("layer.head,layer.head", their outputs zeroed in every forward and the continuation),
// the corrupted sentence activation patching compares the sentence with ('' = the page's default
// for the default sentence, else none yet).

export const fields = {
  models: { type: 'bool', default: false },
  pretrained: { type: 'string', default: '' },
  pttext: { type: 'string', default: '' },
  pthead: { type: 'string', default: '' },
  ptablate: { type: 'string', default: '' },
  ptcorrupt: { type: 'string', default: '' },
};
