#include "session/npy_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "os/atomic_file.h"
#include "os/read_file.h"

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

// numpy pads its header to a multiple of 64 bytes and keeps it short; a longer one is not numpy's.
constexpr std::size_t kMaxHeaderBytes = 64 << 10;

struct NpyHeader {
  std::size_t data_offset = 0;  // where the data starts
  ElementType type = ElementType::kUnsupported;
  std::vector<std::int64_t> shape;
  std::string descr;
  std::size_t string_width = 0;  // strings: characters per element
  bool unicode = false;          // strings: "<U" (UTF-32) rather than "|S" (bytes)
};

Error not_npy(const std::string& where, const std::string& why) {
  return Error{ErrorCode::kInvalidArgument, fmt::format("{}: not a readable .npy file: {}", where, why)};
}

// How many bytes the preamble (magic, version, header length) and header take,
// from the first 12 bytes; an error when they are not numpy's.
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

// The dtype: a number type from kKinds, or fixed-width strings "|S7" / "<U7".
Status parse_dtype(std::string_view header, const std::string& where, NpyHeader& h) {
  const bool has_descr = header.find("'descr'") != std::string_view::npos;
  auto value = value_of(header, "'descr'");
  if (value.size() < 2 || value[0] != '\'') {
    return not_npy(where, has_descr ? "a structured or object dtype (save plain numbers or fixed-width strings)" : "no dtype");
  }
  const auto close = value.find('\'', 1);
  if (close == std::string_view::npos) return not_npy(where, "no dtype");
  h.descr = normalised(std::string(value.substr(1, close - 1)));
  const bool bytes = h.descr.rfind("|S", 0) == 0;
  h.unicode = h.descr.rfind("<U", 0) == 0;
  if (bytes || h.unicode) {
    const std::string_view width = std::string_view(h.descr).substr(2);
    const auto [ptr, ec] = std::from_chars(width.data(), width.data() + width.size(), h.string_width);
    // Width 0 would let a shape ask for any number of strings in no bytes at all.
    if (ec != std::errc() || ptr != width.data() + width.size() || h.string_width == 0) return not_npy(where, fmt::format("dtype '{}' has no width", h.descr));
    h.type = ElementType::kString;
    return {};
  }
  for (const auto& k : kKinds) {
    if (h.descr == k.descr) h.type = k.type;
  }
  if (h.type == ElementType::kUnsupported) {
    return not_npy(where, fmt::format("dtype '{}' is not supported (NumPy has no bfloat16 or float8 dtype: save those as .pb)", h.descr));
  }
  return {};
}

Status parse_shape(std::string_view header, const std::string& where, NpyHeader& h) {
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
  return {};
}

Result<NpyHeader> parse_header(std::string_view preamble_and_header, const std::string& where) {
  auto end = header_end(preamble_and_header, where);
  if (!end) return end.error();
  if (preamble_and_header.size() < *end) return not_npy(where, "truncated header");
  const std::string_view header = preamble_and_header.substr(0, *end).substr(preamble_and_header[6] == 1 ? 10 : 12);
  NpyHeader h;
  h.data_offset = *end;
  RUNG_RETURN_IF_ERROR(parse_dtype(header, where, h));
  const auto fortran = value_of(header, "'fortran_order'");
  if (fortran.starts_with("True")) return not_npy(where, "Fortran order is not supported; save with C order");
  if (!fortran.starts_with("False")) return not_npy(where, "no fortran_order");
  RUNG_RETURN_IF_ERROR(parse_shape(header, where, h));
  return h;
}

// The data bytes the header asks for, when within `max_bytes` and what the file holds.
Result<std::uint64_t> data_bytes(const NpyHeader& h, const std::string& where, std::uint64_t available, std::uint64_t max_bytes) {
  Result<std::uint64_t> need = std::uint64_t{0};
  if (h.type == ElementType::kString) {
    // A string element takes its fixed width (4 bytes a character for "<U"): as many bytes as that many uint8.
    auto shape = h.shape;
    shape.push_back(static_cast<std::int64_t>(std::min<std::uint64_t>(h.string_width * (h.unicode ? 4 : 1), INT64_MAX)));
    need = tensor_bytes(where, ElementType::kUint8, shape, max_bytes);
  } else {
    need = tensor_bytes(where, h.type, h.shape, max_bytes);
  }
  if (!need) return need.error();
  if (available != *need) {
    return not_npy(where, fmt::format("holds {} data bytes, shape {} of {} needs {}", available, shape_string(h.shape), h.descr, *need));
  }
  return need;
}

// Fixed-width strings: bytes (NUL-padded) or UTF-32 code points (zero-padded).
void read_strings(const NpyHeader& h, const char* data, Tensor& t) {
  const std::size_t width = h.string_width, item = h.unicode ? width * 4 : width;
  const auto count = static_cast<std::size_t>(*element_count(h.shape));
  t.strings.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const char* p = data + i * item;
    std::string s;
    if (!h.unicode) {  // NumPy drops trailing NULs only: an embedded one stays
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
}

// The tensor from the data after the header (data_bytes already checked its size).
Tensor tensor_from_data(const NpyHeader& h, std::string name, const char* data, std::size_t size) {
  Tensor t{std::move(name), h.type, h.shape, {}, {}};
  if (h.type == ElementType::kString) {
    read_strings(h, data, t);
  } else {
    // Not memcpy: for a tensor with a zero dimension the empty vector's pointer is null.
    const auto* first = reinterpret_cast<const std::byte*>(data);
    t.bytes.assign(first, first + size);
  }
  return t;
}

}  // namespace

Result<Tensor> parse_npy(std::string_view bytes, const std::string& where, const std::string& name, std::uint64_t max_bytes) {
  auto h = parse_header(bytes, where);
  if (!h) return h.error();
  auto need = data_bytes(*h, where, bytes.size() - h->data_offset, max_bytes);
  if (!need) return need.error();
  return tensor_from_data(*h, name, bytes.data() + h->data_offset, *need);
}

Result<Tensor> read_npy_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  const std::string where = path.string();
  // No size limit on the file itself: only the header, then the data its shape
  // needs once checked against the tensor limit, are read.
  auto file = open_input_file(path, FileKind::kTensor, UINT64_MAX);
  if (!file) return file.error();
  auto head = file->read(0, 12);
  if (!head) return head.error();
  auto end = header_end(*head, where);
  if (!end) return end.error();
  if (file->size() < *end) return not_npy(where, "truncated header");
  auto header = file->read(0, *end);
  if (!header) return header.error();
  auto h = parse_header(*header, where);
  if (!h) return h.error();
  // Only now, with the size checked against the limit and the file, is the data read.
  auto need = data_bytes(*h, where, file->size() - h->data_offset, max_bytes);
  if (!need) return need.error();
  auto data = file->read(h->data_offset, *need);
  if (!data) return data.error();
  if (data->size() != *need) return Error{ErrorCode::kIo, fmt::format("{}: could not read its data", where)};
  return tensor_from_data(*h, path.stem().string(), data->data(), data->size());
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
