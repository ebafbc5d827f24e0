// conform's --filter: a regular expression searched in each test's id, matched
// by RE2 (libre2), whose time is linear in the id's length and whose parser
// and matcher keep their stacks on the heap. std::regex recursed once per
// character: a filter of 100 000 characters, or 20 000 nested parentheses,
// overflowed the stack (SIGSEGV) before any test ran.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "rung/result.h"

namespace re2 {
class RE2;
}

namespace rung {

// The longest filter taken: a test id is a folder and a name, far shorter.
inline constexpr std::size_t kMaxFilterBytes = 1000;

class TestFilter {
 public:
  // The filter `pattern` (RE2's syntax: ECMAScript's without backreferences or
  // lookaround). kInvalidArgument when it is longer than kMaxFilterBytes, is
  // not a regular expression, or needs more than RE2's memory budget.
  static Result<TestFilter> make(std::string_view pattern);
  TestFilter(TestFilter&&) noexcept;
  TestFilter& operator=(TestFilter&&) noexcept;
  ~TestFilter();

  // Whether the pattern occurs anywhere in `id`.
  bool finds_in(std::string_view id) const;

 private:
  explicit TestFilter(std::unique_ptr<re2::RE2> re);
  std::unique_ptr<re2::RE2> re_;
};

}  // namespace rung
