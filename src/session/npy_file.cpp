#include "session/npy_file.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <fstream>

#include "os/read_file.h"

namespace rung {
namespace {

// numpy pads its header to a multiple of 64 bytes and keeps it short; a longer one is not numpy's.
constexpr std::size_t kMaxHeaderBytes = 64 << 10;

struct NpyHeader {
  std::size_t data_offset = 0;  // where the data starts
  ElementType type = ElementType::kUnsupported;
  std::vector<std::int64_t> shape;
};

Error not_npy(const std::string& where, const std::string& why) {
  return Error{ErrorCode::kInvalidArgument, fmt::format("{}: not a readable .npy file: {}", where, why)};
}

// How many bytes the preamble (magic, version, header length) and header take,
// from the first 12 bytes; 0 with an error when they are not numpy's.
Result<std::size_t> header_end(std::string_view head, const std::string& where) {
  if (head.size() < 10 || head.substr(0, 6) != "\x93NUMPY") return not_npy(where, "no NUMPY magic");
  const auto major = static_cast<unsigned char>(head[6]);
  std::size_t length = 0, preamble = 0;
  if (major == 1) {
    length = static_cast<unsigned char>(head[8]) | static_cast<std::size_t>(static_cast<unsigned char>(head[9])) << 8;
    preamble = 10;
  } else if (major == 2 || major == 3) {
    if (head.size() < 12) return not_npy(where, "truncated header");
    for (int i = 3; i >= 0; --i) length = length << 8 | static_cast<unsigned char>(head[8 + static_cast<std::size_t>(i)]);
    preamble = 12;
  } else {
    return not_npy(where, fmt::format("format version {}", major));
  }
  if (length > kMaxHeaderBytes) return not_npy(where, fmt::format("a header of {} bytes", length));
  return preamble + length;
}

// The value after 'key': in the header's dict, with the text after it.
std::string_view value_of(std::string_view header, std::string_view key) {
  const auto k = header.find(key);
  if (k == std::string_view::npos) return {};
  auto rest = header.substr(k + key.size());
  const auto colon = rest.find_first_not_of(" \t");
  if (colon == std::string_view::npos || rest[colon] != ':') return {};
  rest = rest.substr(colon + 1);
  const auto start = rest.find_first_not_of(" \t");
  return start == std::string_view::npos ? std::string_view{} : rest.substr(start);
}

Result<NpyHeader> parse_header(std::string_view preamble_and_header, const std::string& where) {
  auto end = header_end(preamble_and_header, where);
  if (!end) return end.error();
  if (preamble_and_header.size() < *end) return not_npy(where, "truncated header");
  const std::string_view header = preamble_and_header.substr(0, *end).substr(preamble_and_header[6] == 1 ? 10 : 12);
  NpyHeader h;
  h.data_offset = *end;

  auto descr = value_of(header, "'descr'");
  if (descr.size() < 2 || descr[0] != '\'') return not_npy(where, "no dtype");
  const auto close = descr.find('\'', 1);
  if (close == std::string_view::npos) return not_npy(where, "no dtype");
  const std::string_view dtype = descr.substr(1, close - 1);
  struct Kind {
    std::string_view descr;
    ElementType type;
  };
  static constexpr Kind kinds[] = {{"<f4", ElementType::kFloat}, {"<f2", ElementType::kFloat16}, {"<f8", ElementType::kDouble},
                                   {"|i1", ElementType::kInt8},  {"|u1", ElementType::kUint8},   {"<i2", ElementType::kInt16},
                                   {"<i4", ElementType::kInt32}, {"<i8", ElementType::kInt64},   {"|b1", ElementType::kBool}};
  for (const auto& k : kinds) {
    if (dtype == k.descr) h.type = k.type;
  }
  if (h.type == ElementType::kUnsupported) return not_npy(where, fmt::format("dtype '{}' is not supported", dtype));

  const auto fortran = value_of(header, "'fortran_order'");
  if (fortran.starts_with("True")) return not_npy(where, "Fortran order is not supported; save with C order");
  if (!fortran.starts_with("False")) return not_npy(where, "no fortran_order");

  auto shape = value_of(header, "'shape'");
  const auto close_paren = shape.find(')');
  if (shape.empty() || shape[0] != '(' || close_paren == std::string_view::npos) return not_npy(where, "no shape");
  shape = shape.substr(1, close_paren - 1);
  while (!shape.empty()) {
    const auto comma = shape.find(',');
    std::string_view d = shape.substr(0, comma);
    shape = comma == std::string_view::npos ? std::string_view{} : shape.substr(comma + 1);
    const auto first = d.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;  // "(3,)": the empty part after the last comma
    d = d.substr(first, d.find_last_not_of(" \tL") - first + 1);
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
    if (ec != std::errc() || ptr != d.data() + d.size() || v < 0) return not_npy(where, fmt::format("shape dimension '{}'", d));
    h.shape.push_back(v);
  }
  return h;
}

Result<std::uint64_t> data_bytes(const NpyHeader& h, const std::string& where, std::uint64_t available, std::uint64_t max_bytes) {
  auto need = tensor_bytes(where, h.type, h.shape, max_bytes);
  if (!need) return need.error();
  if (available != *need) {
    return not_npy(where, fmt::format("holds {} data bytes, shape {} of {} needs {}", available, shape_string(h.shape),
                                      element_type_name(h.type), *need));
  }
  return need;
}

}  // namespace

Result<Tensor> parse_npy(std::string_view bytes, const std::string& where, const std::string& name, std::uint64_t max_bytes) {
  auto h = parse_header(bytes, where);
  if (!h) return h.error();
  auto need = data_bytes(*h, where, bytes.size() - h->data_offset, max_bytes);
  if (!need) return need.error();
  Tensor t{name, h->type, h->shape, {}};
  t.bytes.resize(*need);
  std::memcpy(t.bytes.data(), bytes.data() + h->data_offset, *need);
  return t;
}

Result<Tensor> read_npy_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  const std::string where = path.string();
  if (auto kind = non_regular_kind(path); !kind.empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: {}, not a file", where, kind)};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{ErrorCode::kNotFound, fmt::format("{}: cannot be opened", where)};
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return Error{ErrorCode::kIo, fmt::format("{}: {}", where, ec.message())};
  std::string head(12, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  auto end = header_end(head, where);
  if (!end) return end.error();
  if (size < *end) return not_npy(where, "truncated header");
  head.resize(*end);
  in.seekg(0);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  auto h = parse_header(head, where);
  if (!h) return h.error();
  auto need = data_bytes(*h, where, size - h->data_offset, max_bytes);
  if (!need) return need.error();
  Tensor t{path.stem().string(), h->type, h->shape, {}};
  t.bytes.resize(*need);
  in.read(reinterpret_cast<char*>(t.bytes.data()), static_cast<std::streamsize>(*need));
  if (static_cast<std::uint64_t>(in.gcount()) != *need) return Error{ErrorCode::kIo, fmt::format("{}: could not read its data", where)};
  return t;
}

}  // namespace rung
