#include "session/npy_file.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace rung {

Result<Tensor> read_npy_file(const std::filesystem::path& path) {
  const std::string where = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{ErrorCode::kNotFound, fmt::format("{}: cannot be opened", where)};
  std::stringstream s;
  s << in.rdbuf();
  const std::string data = s.str();
  auto bad = [&](const std::string& why) { return Error{ErrorCode::kInvalidArgument, fmt::format("{}: not a readable .npy file: {}", where, why)}; };
  if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0) return bad("no NUMPY magic");
  const auto major = static_cast<unsigned char>(data[6]);
  std::size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(data[8]) | static_cast<std::size_t>(static_cast<unsigned char>(data[9])) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (data.size() < 12) return bad("truncated header");
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | static_cast<unsigned char>(data[8 + static_cast<std::size_t>(i)]);
    offset = 12;
  } else {
    return bad(fmt::format("format version {}", major));
  }
  if (data.size() < offset + header_len) return bad("truncated header");
  const std::string header = data.substr(offset, header_len);
  std::smatch m;
  static const std::regex descr_re(R"('descr'\s*:\s*'([^']*)')"), fortran_re(R"('fortran_order'\s*:\s*(True|False))"),
      shape_re(R"('shape'\s*:\s*\(([^)]*)\))");
  if (!std::regex_search(header, m, descr_re)) return bad("no dtype");
  const std::string descr = m[1];
  if (!std::regex_search(header, m, fortran_re)) return bad("no fortran_order");
  if (m[1] == "True") return bad("Fortran order is not supported; save with C order");
  if (!std::regex_search(header, m, shape_re)) return bad("no shape");
  Tensor t;
  t.name = path.stem().string();
  std::stringstream dims(m[1].str());
  for (std::string d; std::getline(dims, d, ',');) {
    if (d.find_first_not_of(" ") == std::string::npos) continue;
    t.shape.push_back(std::stoll(d));
  }
  struct Kind {
    const char* descr;
    ElementType type;
  };
  static const Kind kinds[] = {{"<f4", ElementType::kFloat}, {"<f2", ElementType::kFloat16}, {"<f8", ElementType::kDouble},
                               {"|i1", ElementType::kInt8},  {"|u1", ElementType::kUint8},   {"<i2", ElementType::kInt16},
                               {"<i4", ElementType::kInt32}, {"<i8", ElementType::kInt64},   {"|b1", ElementType::kBool}};
  t.type = ElementType::kUnsupported;
  for (const auto& k : kinds) {
    if (descr == k.descr) t.type = k.type;
  }
  if (t.type == ElementType::kUnsupported) return bad(fmt::format("dtype '{}' is not supported", descr));
  const std::size_t need = t.element_count() * element_size(t.type);
  if (data.size() - offset - header_len != need) {
    return bad(fmt::format("holds {} data bytes, shape {} of {} needs {}", data.size() - offset - header_len, shape_string(t.shape),
                           element_type_name(t.type), need));
  }
  t.bytes.resize(need);
  std::memcpy(t.bytes.data(), data.data() + offset + header_len, need);
  return t;
}

}  // namespace rung
