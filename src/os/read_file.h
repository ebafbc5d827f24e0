// Reading a whole file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "rung/result.h"

namespace rung {

// The whole file as text; empty when it cannot be read (callers treat that as absent).
std::string read_text_file(const std::filesystem::path& path);

// The whole of a regular file of at most `max_bytes`, or why not, in words that
// say what the path is: "does not exist", "is a directory, not a file", "is a
// FIFO, not a file", "cannot be read: Permission denied", "is 3.0 GiB; rung
// reads at most 64.0 MiB here". A FIFO or device is never opened for reading,
// so it cannot block. `limit_option` names what raises the limit, for the message.
Result<std::string> read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view limit_option = {});

// "is a directory", "is a FIFO", ... for a path that exists but is not a regular file; "" otherwise.
std::string non_regular_kind(const std::filesystem::path& path);

// 1536 -> "1.5 KiB", 3221225472 -> "3.0 GiB".
std::string byte_size_text(std::uint64_t bytes);

}  // namespace rung
