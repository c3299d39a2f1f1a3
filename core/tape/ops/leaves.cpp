// The tape's leaves: module inputs and parameters (Context::input, Context::param in tape.cpp). Their
// tensors are given, not computed; a step prints them by name; the walk stops at them (their
// gradients are what backward() returns for them).
#include "tape/op.hpp"

namespace attn {

const OpDef input_op{"input", keep_output, no_attrs, plain_call, no_backward};
const OpDef parameter_op{"parameter", keep_output, no_attrs, plain_call, no_backward};

}  // namespace attn
