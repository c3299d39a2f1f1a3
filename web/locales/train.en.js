// English texts of "Train in the page" (web/train/): each task's name, what a solving head must do
// and the pattern to expect (tasks.js quotes the keys), and the head labels of patterns.js.
// train.zh.js has the same keys. Text in `backticks` is shown as code; {d} is a parameter.

export const trainEn = {
  'trainTask.copy.name': 'Copy',
  'trainTask.copy.explain': 'Eight letters, a separator `|`, then the same eight letters again. After the separator the next letter to write always sits 8 positions back, so a head that solves it looks back that fixed distance.',
  'trainTask.copy.pattern': 'A diagonal stripe 8 cells left of the main diagonal, in the rows after the separator.',
  'trainTask.reverse.name': 'Reverse',
  'trainTask.reverse.explain': 'Eight letters, `|`, then the same letters backwards. Each output reads the input mirrored about the separator: first the letter just before `|`, then one further back each time.',
  'trainTask.reverse.pattern': 'An anti-diagonal in the rows after the separator: the first of them looks just left of `|`, the last one at the first letter.',
  'trainTask.sort.name': 'Sort',
  'trainTask.sort.explain': 'Six different letters, `|`, then the same letters in alphabetical order. A head must find, among the input letters, the smallest one that comes after the letter just written.',
  'trainTask.sort.pattern': 'In each row after the separator, one bright cell on the input position holding the next letter in sorted order: a scattered pattern that follows the letters, not the positions.',
  'trainTask.induction.name': 'Induction',
  'trainTask.induction.explain': 'Random letters, then a stretch of them repeated. Once the repeat has begun, each next letter can be predicted: find where the current letter appeared before and copy the letter that followed it. The repeat starts at a different distance in every sequence, so no fixed offset works: the model needs an induction head, built from a head in the first layer that looks one position back and a head in the second layer that looks for "the token after my token".',
  'trainTask.induction.pattern': 'In the second layer, in the rows of the repeat: a diagonal one cell right of where the current letter appeared before (the induction diagonal). In the first layer, a head looking mostly one position back.',
  'trainTask.max.name': 'Maximum',
  'trainTask.max.explain': 'Eight letters, `|`, then the one that comes last in the alphabet. Only the prediction at the separator counts: the head at `|` must put its attention on the largest letter, wherever it sits.',
  'trainTask.max.pattern': 'The separator\'s row: one bright cell on the position of the largest letter (several if it occurs more than once).',

  'trainPattern.previous': 'previous token',
  'trainPattern.self': 'self',
  'trainPattern.offset': 'fixed offset',
  'trainPattern.offsetBy': 'looks back {d}',
  'trainPattern.antiDiagonal': 'anti-diagonal',
  'trainPattern.induction': 'induction',
  'trainPattern.source': 'reads the answer',
  'trainPatternHelp.previous': 'Attention on the position just before.',
  'trainPatternHelp.self': 'Attention on the position itself.',
  'trainPatternHelp.offset': 'Attention a fixed number of positions back.',
  'trainPatternHelp.antiDiagonal': 'Attention on the input position mirrored about the separator.',
  'trainPatternHelp.induction': 'Attention on the token that followed the previous occurrence of the current token.',
  'trainPatternHelp.source': 'Attention on the positions holding the token to be predicted.',
};
