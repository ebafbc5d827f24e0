#include "conform/filter.h"

#include <fmt/format.h>
#include <re2/re2.h>

namespace rung {

namespace {
// RE2's own budget for one compiled filter; a pattern needing more is refused, not run.
constexpr std::int64_t kFilterMemoryBytes = 8 << 20;
}  // namespace

Result<TestFilter> TestFilter::make(std::string_view pattern) {
  if (pattern.size() > kMaxFilterBytes) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("--filter is {} bytes long; at most {} are taken (a test id is a folder and a name)", pattern.size(), kMaxFilterBytes)};
  }
  RE2::Options options;
  options.set_log_errors(false);  // the error is returned, never printed by the library
  options.set_max_mem(kFilterMemoryBytes);
  auto re = std::make_unique<RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("--filter '{}' is not a regular expression: {}", pattern, re->error())};
  }
  return TestFilter(std::move(re));
}

TestFilter::TestFilter(std::unique_ptr<re2::RE2> re) : re_(std::move(re)) {}
TestFilter::TestFilter(TestFilter&&) noexcept = default;
TestFilter& TestFilter::operator=(TestFilter&&) noexcept = default;
TestFilter::~TestFilter() = default;

bool TestFilter::finds_in(std::string_view id) const { return RE2::PartialMatch(re2::StringPiece(id.data(), id.size()), *re_); }

}  // namespace rung
