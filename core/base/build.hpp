// What this build of the core holds. The page's small WebAssembly build (CMakeLists.txt:
// attention_small, the playground's first view) is compiled with ATTN_INTERP=0: the
// interpretability fields (core/SCENARIO.md, "Interpretability") are refused there with an error
// saying which build has them, and their code is left out (about 20 KB gzip). Every other build
// (native, the full-speed WebAssembly build the page's workers and the CLIs load) has them.
#pragma once

#ifndef ATTN_INTERP
#define ATTN_INTERP 1
#endif

#ifndef ATTN_PRETRAINED
#define ATTN_PRETRAINED 1
#endif

namespace attn {
inline constexpr bool kInterp = ATTN_INTERP != 0;
inline constexpr bool kPretrained = ATTN_PRETRAINED != 0;
}  // namespace attn
