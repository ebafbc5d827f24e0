#include "conform/suite.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "graph/model_file.h"
#include "os/regular_file.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

// "ReduceSum" and "test_reduce_sum_keepdims" both become "reducesum...": lower case, no underscores.
std::string folded(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

bool is_test(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "model.onnx", ec) || fs::is_regular_file(dir / "data.json", ec);
}

std::vector<fs::path> subfolders(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory(ec) && !e.path().filename().string().starts_with(".")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Named by its suite folder and its own: "node/test_abs", however deep the folder given.
ConformTest describe_test(const fs::path& dir) {
  ConformTest t;
  t.dir = dir;
  t.suite = dir.parent_path().filename().string();
  t.id = t.suite + "/" + dir.filename().string();
  std::error_code ec;
  if (!fs::is_regular_file(dir / "model.onnx", ec)) {
    t.skipped = "a download stub: data.json names where the model is; the package does not hold it";
    return t;
  }
  auto ops = graph_op_types(dir / "model.onnx");
  t.op = ops ? test_operator(dir.filename().string(), *ops) : "?";
  return t;
}

void collect(const fs::path& dir, int depth, std::vector<ConformTest>& out) {
  if (is_test(dir)) {
    out.push_back(describe_test(dir));
    return;
  }
  if (depth == 0) return;
  for (const auto& sub : subfolders(dir)) collect(sub, depth - 1, out);
}

}  // namespace

// The operator of a test: the graph's only op type; for an "_expanded" test (a
// function's body inlined) its sibling's; else the graph's op type whose name the
// test's name starts with ("test_reduce_sum_keepdims": ReduceSum, "test_Conv2d_groups":
// Conv); else the graph's op types, first three, in order.
std::string test_operator(const std::string& test_name, const std::vector<std::string>& op_types) {
  std::vector<std::string> distinct;
  for (const auto& op : op_types) {
    if (std::find(distinct.begin(), distinct.end(), op) == distinct.end()) distinct.push_back(op);
  }
  if (distinct.size() == 1) return distinct.front();
  std::string name = test_name.starts_with("test_") ? test_name.substr(5) : test_name;
  if (name.starts_with("operator_")) name = name.substr(9);
  const std::string key = folded(name);
  std::string best;
  for (const auto& op : distinct) {
    const std::string f = folded(op.substr(op.rfind('.') + 1));
    if (key.starts_with(f) && f.size() > folded(best).size()) best = op;
  }
  if (!best.empty()) return best;
  if (distinct.empty()) return "(no nodes)";
  std::vector<std::string> first(distinct.begin(), distinct.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(3, distinct.size())));
  return fmt::format("{}{}", fmt::join(first, " + "), distinct.size() > 3 ? " + ..." : "");
}

Result<std::vector<ConformTest>> find_tests(const std::vector<fs::path>& folders) {
  std::vector<ConformTest> tests;
  for (const auto& folder : folders) {
    std::error_code ec;
    RUNG_RETURN_IF_ERROR(check_input_directory(folder));
    fs::path root = fs::absolute(folder).lexically_normal();
    if (!root.has_filename()) root = root.parent_path();  // "suite/" is "suite"
    const std::size_t before = tests.size();
    collect(root, 2, tests);
    if (tests.size() == before) {
      return Error{ErrorCode::kNotFound, fmt::format("{}: holds no test (a folder with model.onnx and test_data_set_N/)", folder.string())};
    }
  }
  std::sort(tests.begin(), tests.end(), [](const ConformTest& a, const ConformTest& b) { return a.id < b.id; });
  tests.erase(std::unique(tests.begin(), tests.end(), [](const ConformTest& a, const ConformTest& b) { return a.dir == b.dir; }), tests.end());
  // An "_expanded" test exercises its sibling's operator through the function's body.
  std::map<std::string, std::string> op_by_id;
  for (const auto& t : tests) op_by_id[t.id] = t.op;
  for (auto& t : tests) {
    if (!t.id.ends_with("_expanded")) continue;
    if (auto it = op_by_id.find(t.id.substr(0, t.id.size() - 9)); it != op_by_id.end()) t.op = it->second;
  }
  return tests;
}

}  // namespace rung
