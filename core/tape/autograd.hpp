// Reverse-mode differentiation over the tape (tape.hpp): from dL/dL = 1 at the loss node, the
// nodes are walked in reverse and each op's backward (autograd.cpp, one function per Op) adds its
// inputs' gradients. The steps a forward names are the nodes this walk visits, so the gradient of
// every step is there to show, and there is no second copy of any module's maths.
// Only nodes that require gradients get one (parameters, float inputs and what depends on them).
#pragma once
#include <vector>

#include "tape/tape.hpp"

namespace attn {

// dL/d(node) for every node of the tape (undefined where the loss does not depend on it, or the
// node requires no gradient). `loss`: a 0-d node.
std::vector<Tensor> backward(const std::vector<Node>& nodes, int32_t loss);
// The same from any node `root` with dL/d(root) = root_grad (its shape): e.g. a weighted sum of an
// output, as the finite-difference tests use. param_grads false: no parameter's gradient (and no
// work for one), the steps' only (attribution patching).
std::vector<Tensor> backward(const std::vector<Node>& nodes, int32_t root, const Tensor& root_grad, bool param_grads = true);

}  // namespace attn
