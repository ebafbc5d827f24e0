// What a directory holds, and removing a tree of them: rung's own, never
// std::filesystem's iterators or remove_all. mingw's libstdc++ lists a
// directory through _wopendir, whose fixed MAX_PATH buffer makes a directory
// past 260 characters list the *current* directory instead, and remove_all then
// never returns (measured under wine: a 309-character cache path hung
// `rung.exe probe`). tests/windows/symbols-test.sh fails on a Windows object
// that reaches for them again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <system_error>
#include <vector>

#include "rung/result.h"

namespace rung {

struct Listing {
  bool recursive = false;        // everything below, depth first; never down through a link
  bool skip_unreadable = false;  // a subdirectory that cannot be read is passed over, not an error
  std::size_t max_entries = std::numeric_limits<std::size_t>::max();  // stop after this many
};

// The paths in `dir` (`dir / name`; not "." or ".."), in no set order. An error
// when `dir` (or, unless skipped, a subdirectory) cannot be read.
Result<std::vector<std::filesystem::path>> list_directory(const std::filesystem::path& dir, const Listing& how = {});

// The same one entry at a time, without holding the list: `visit` returns false to stop.
Status visit_directory(const std::filesystem::path& dir, const Listing& how, const std::function<bool(const std::filesystem::path&)>& visit);

// Removes `path` and everything under it; a link is removed, never what it
// points to; a path that is not there is 0 removed and no error. Returns how
// many were removed; `ec` holds the first failure (the rest is still tried).
std::uintmax_t remove_tree(const std::filesystem::path& path, std::error_code& ec);

}  // namespace rung
