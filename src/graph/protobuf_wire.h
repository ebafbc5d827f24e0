// Protocol buffers' wire format, read and written by hand for the builds that
// have no protobuf library (Windows: Debian builds none for mingw). Only what
// rung's protobuf-free readers need: fields walked one at a time, nothing
// interpreted here. Where the library is there, it is used instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rung::wire {

enum Type : std::uint32_t { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

struct Field {
  std::uint32_t number = 0;
  Type type = kVarint;
  std::uint64_t value = 0;  // a varint's, or a fixed one's bits
  std::string_view bytes;   // a length-delimited one's
};

// Walks a message's fields in order; `next` is empty at the end and `broken` set
// when the bytes are not a message (a truncated field, a group, a bad tag).
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}
  std::optional<Field> next() {
    if (rest_.empty() || broken_) return std::nullopt;
    auto tag = varint();
    if (!tag || (*tag >> 3) == 0 || (*tag >> 3) > 0x1fffffff) return fail();
    Field f;
    f.number = static_cast<std::uint32_t>(*tag >> 3);
    f.type = static_cast<Type>(*tag & 7);
    switch (f.type) {
      case kVarint: {
        auto v = varint();
        if (!v) return fail();
        f.value = *v;
        return f;
      }
      case kFixed64: case kFixed32: {
        const std::size_t n = f.type == kFixed64 ? 8 : 4;
        if (rest_.size() < n) return fail();
        for (std::size_t i = 0; i < n; ++i) f.value |= static_cast<std::uint64_t>(static_cast<unsigned char>(rest_[i])) << (8 * i);
        rest_.remove_prefix(n);
        return f;
      }
      case kBytes: {
        auto n = varint();
        if (!n || *n > rest_.size()) return fail();
        f.bytes = rest_.substr(0, static_cast<std::size_t>(*n));
        rest_.remove_prefix(static_cast<std::size_t>(*n));
        return f;
      }
    }
    return fail();  // groups (3, 4) and the unused types
  }
  bool broken() const { return broken_; }
  // A varint from the front (a packed repeated field's element).
  std::optional<std::uint64_t> varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64 && !rest_.empty(); shift += 7) {
      const auto byte = static_cast<unsigned char>(rest_.front());
      rest_.remove_prefix(1);
      v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return v;
    }
    return std::nullopt;
  }
  bool empty() const { return rest_.empty(); }

 private:
  std::optional<Field> fail() {
    broken_ = true;
    return std::nullopt;
  }
  std::string_view rest_;
  bool broken_ = false;
};

inline void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
inline void put_tag(std::string& out, std::uint32_t number, Type type) { put_varint(out, (static_cast<std::uint64_t>(number) << 3) | type); }
inline void put_bytes(std::string& out, std::uint32_t number, std::string_view bytes) {
  put_tag(out, number, kBytes);
  put_varint(out, bytes.size());
  out.append(bytes);
}

}  // namespace rung::wire
