// The one error type of the core. Every public entry point checks its input and throws
// attn::Error with a message naming the value, the rule it broke and the fix, e.g.
//   "num_heads (3) must divide d_model (10)". Asserts live only inside hot loops.
// An error about one field of the scenario also says which, as a path (core/SCENARIO.md,
// "Errors"): "config.num_heads", "inputs.mask", "weights", ... so a page can put the message
// beside that control without reading the text.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace attn {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, std::string field = "")
      : std::runtime_error(message), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// fail("num_heads (", h, ") must divide d_model (", c, ")") builds the message from its pieces.
template <class... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw Error(os.str());
}

// The same, about one field of the scenario: fail_at("config.num_heads", "num_heads (", h, ") ...").
template <class... Parts>
[[noreturn]] void fail_at(const std::string& field, const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw Error(os.str(), field);
}

}  // namespace attn
