// Simplified Chinese texts of "Train in the page" (web/train/), the same keys as train.en.js:
// each task's name, what a solving head must do, the pattern to expect, and the head labels.

export const trainZh = {
  'trainTask.copy.name': '复制',
  'trainTask.copy.explain': '八个字母、一个分隔符 `|`，然后把这八个字母原样再写一遍。分隔符之后，要写的下一个字母总在 8 个位置之前，所以能解这个任务的头总是向前看固定的距离。',
  'trainTask.copy.pattern': '分隔符之后的各行里，主对角线左侧 8 格处有一条斜线。',
  'trainTask.reverse.name': '反转',
  'trainTask.reverse.explain': '八个字母、`|`，然后把这些字母倒过来写。每个输出读取以分隔符为镜面对称的输入位置：先读 `|` 紧左边的字母，之后每次再往前一个。',
  'trainTask.reverse.pattern': '分隔符之后的各行里有一条反对角线：其中第一行看 `|` 紧左边，最后一行看第一个字母。',
  'trainTask.sort.name': '排序',
  'trainTask.sort.explain': '六个互不相同的字母、`|`，然后按字母表顺序写出这些字母。头必须在输入的字母中，找到排在刚写出的字母之后的最小那个。',
  'trainTask.sort.pattern': '分隔符之后的每一行，亮格落在输入中持有排序后下一个字母的位置上：图案跟着字母走，而不是跟着位置走，所以看起来是分散的。',
  'trainTask.induction.name': '归纳',
  'trainTask.induction.explain': '先是随机字母，然后其中一段被重复。重复开始之后，每个下一个字母都能预测：找到当前字母之前出现的位置，抄下紧跟在它后面的字母。重复段在每个序列里开始的距离都不同，固定偏移行不通：模型需要一个归纳头（induction head），它由第一层里向前看一个位置的头，和第二层里寻找"我这个词元之后那个词元"的头共同构成。',
  'trainTask.induction.pattern': '第二层、重复段的各行里：在当前字母之前出现位置的右边一格处有一条斜线（归纳对角线）。第一层里有一个头主要向前看一个位置。',
  'trainTask.max.name': '最大值',
  'trainTask.max.explain': '八个字母、`|`，然后是其中在字母表里最靠后的那个。只有分隔符处的预测计分：`|` 处的头必须把注意力放在最大的字母上，无论它在哪个位置。',
  'trainTask.max.pattern': '分隔符那一行：最大字母所在位置上有一个亮格（若它出现多次则有多个）。',

  'trainPattern.previous': '前一个词元',
  'trainPattern.self': '自身',
  'trainPattern.offset': '固定偏移',
  'trainPattern.offsetBy': '向前看 {d} 个位置',
  'trainPattern.antiDiagonal': '反对角线',
  'trainPattern.induction': '归纳',
  'trainPattern.source': '读取答案',
  'trainPatternHelp.previous': '落在前一个位置上的注意力。',
  'trainPatternHelp.self': '落在自身位置上的注意力。',
  'trainPatternHelp.offset': '落在固定距离之前的位置上的注意力。',
  'trainPatternHelp.antiDiagonal': '落在以分隔符为镜面对称的输入位置上的注意力。',
  'trainPatternHelp.induction': '落在当前词元上一次出现之后那个词元上的注意力。',
  'trainPatternHelp.source': '落在持有待预测词元的位置上的注意力。',
};
