#include "session/npy_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "os/atomic_file.h"

namespace rung {
namespace {

struct Kind {
  const char* descr;
  ElementType type;
};

// NumPy's dtype strings; the byte order mark '<' or '|' (one byte: no order) as
// NumPy writes them on a little-endian machine.
constexpr Kind kKinds[] = {{"<f4", ElementType::kFloat},  {"<f2", ElementType::kFloat16}, {"<f8", ElementType::kDouble},
                           {"|i1", ElementType::kInt8},   {"|u1", ElementType::kUint8},   {"<i2", ElementType::kInt16},
                           {"<u2", ElementType::kUint16}, {"<i4", ElementType::kInt32},   {"<u4", ElementType::kUint32},
                           {"<i8", ElementType::kInt64},  {"<u8", ElementType::kUint64},  {"|b1", ElementType::kBool}};

// "=f4" (native order) is "<f4" here; NumPy may also write "<i1" for "|i1".
std::string normalised(std::string descr) {
  if (descr.size() >= 2 && descr[0] == '=') descr[0] = '<';
  if (descr.size() == 3 && descr[0] == '<' && descr[2] == '1') descr[0] = '|';
  return descr;
}

std::string utf8_of(char32_t c) {
  std::string out;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xe0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
  return out;
}

// Fixed-width strings: "|S7" (bytes, NUL-padded) or "<U7" (UTF-32 code points, zero-padded).
bool read_strings(const std::string& descr, const char* data, std::size_t size, Tensor& t, std::string& problem) {
  const bool bytes = descr.rfind("|S", 0) == 0, unicode = descr.rfind("<U", 0) == 0;
  if (!bytes && !unicode) return false;
  std::size_t width = 0;
  try {
    width = std::stoul(descr.substr(2));
  } catch (const std::exception&) {
    problem = fmt::format("dtype '{}' has no width", descr);
    return true;
  }
  const std::size_t item = bytes ? width : width * 4, n = t.element_count();
  if (size != item * n) {
    problem = fmt::format("holds {} data bytes, shape {} of {} needs {}", size, shape_string(t.shape), descr, item * n);
    return true;
  }
  t.type = ElementType::kString;
  for (std::size_t i = 0; i < n; ++i) {
    const char* p = data + i * item;
    std::string s;
    if (bytes) {  // NumPy drops trailing NULs only: an embedded one stays
      std::size_t length = width;
      while (length > 0 && p[length - 1] == '\0') --length;
      s.assign(p, length);
    } else {
      for (std::size_t k = 0; k < width; ++k) {
        char32_t c = 0;
        std::memcpy(&c, p + 4 * k, 4);
        if (c == 0) break;
        s += utf8_of(c);
      }
    }
    t.strings.push_back(std::move(s));
  }
  return true;
}

}  // namespace

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
  if (!std::regex_search(header, m, descr_re)) {
    if (header.find("'descr'") != std::string::npos) return bad("a structured or object dtype (save plain numbers or fixed-width strings)");
    return bad("no dtype");
  }
  const std::string descr = normalised(m[1]);
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
  const char* body = data.data() + offset + header_len;
  const std::size_t body_size = data.size() - offset - header_len;
  std::string problem;
  if (read_strings(descr, body, body_size, t, problem)) {
    if (!problem.empty()) return bad(problem);
    return t;
  }
  t.type = ElementType::kUnsupported;
  for (const auto& k : kKinds) {
    if (descr == k.descr) t.type = k.type;
  }
  if (t.type == ElementType::kUnsupported) {
    return bad(fmt::format("dtype '{}' is not supported (NumPy has no bfloat16 or float8 dtype: save those as .pb)", descr));
  }
  const std::size_t need = t.element_count() * element_size(t.type);
  if (body_size != need) {
    return bad(fmt::format("holds {} data bytes, shape {} of {} needs {}", body_size, shape_string(t.shape), element_type_name(t.type), need));
  }
  t.bytes.resize(need);
  std::memcpy(t.bytes.data(), body, need);
  return t;
}

Status write_npy_file(const Tensor& tensor, const std::filesystem::path& path) {
  std::string descr;
  for (const auto& k : kKinds) {
    if (k.type == tensor.type) descr = k.descr;
  }
  std::size_t width = 1;
  if (tensor.type == ElementType::kString) {
    for (const auto& s : tensor.strings) width = std::max(width, s.size());
    descr = fmt::format("|S{}", width);
  }
  if (descr.empty()) {
    return Error{ErrorCode::kUnsupported, fmt::format("{}: NumPy has no {} dtype; write tensor '{}' as .pb instead", path.string(),
                                                      element_type_name(tensor.type), tensor.name)};
  }
  if (!tensor.consistent()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: tensor '{}' does not hold as many elements as its shape says", path.string(), tensor.name)};
  }
  // Python's tuple: "()", "(4,)", "(2, 3)".
  std::string shape = fmt::format("{}", fmt::join(tensor.shape, ", "));
  if (tensor.shape.size() == 1) shape += ",";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
  // Magic, version, length, then the header padded with spaces to a multiple of 64, ending in a newline.
  const std::size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  if (tensor.type == ElementType::kString) {
    for (const auto& s : tensor.strings) {
      out += s;
      out.append(width - s.size(), '\0');
    }
  } else {
    out.append(reinterpret_cast<const char*>(tensor.bytes.data()), tensor.bytes.size());
  }
  return write_file_atomically(path, out);
}

}  // namespace rung
