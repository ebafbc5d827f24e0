// Where nodes ran, read from ONNX Runtime's own profile of a session's runs:
// the evidence `rung bench` and `rung conform` give for a rung's placement.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace rung {

// Provider -> distinct nodes it ran, most first. Empty when the profile names no node.
std::vector<std::pair<std::string, int>> nodes_by_provider(const std::filesystem::path& profile);

}  // namespace rung
