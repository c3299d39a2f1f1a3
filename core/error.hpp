// The one error type of the core. Every public entry point checks its input and throws
// attn::Error with a message naming the value, the rule it broke and the fix, e.g.
//   "num_heads (3) must divide d_model (10)". Asserts live only inside hot loops.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace attn {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// fail("num_heads (", h, ") must divide d_model (", c, ")") builds the message from its pieces.
template <class... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw Error(os.str());
}

}  // namespace attn
