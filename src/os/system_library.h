// System libraries a command needs only sometimes, loaded on first use instead
// of at exec: a library linked into the CLI costs every launch its loading and
// binding (libpq alone brings Kerberos, LDAP, GnuTLS and SASL: about 5 ms of a
// warm `rung probe`), although only a postgresql:// registry uses it. The same
// holds, a millisecond or two each, for OpenSSL's libcrypto (a warm launch
// hashes nothing: the file-hash cache answers), SQLite (the release registry)
// and stb (images). tests/startup-links-test.cmake fails when one is linked again.
#pragma once

#include <string>

#include "rung/result.h"

namespace rung {

enum class SystemLibrary {
  kPostgresClient,  // libpq: the registry on PostgreSQL
  kCrypto,          // OpenSSL's libcrypto: SHA-256 (os/posix/sha256.cpp)
  kSqlite,          // SQLite: the registry in one file
  kImages,          // stb: decoding and writing images (image/io.cpp)
};

// The file name the dynamic loader knows it by on this system: "libpq.so.5".
std::string system_library_name(SystemLibrary library);

// Loaded once per process and never unloaded, found where the dynamic loader
// finds a linked library (LD_LIBRARY_PATH, ld.so.cache, the system directories;
// never the current directory). Its symbols stay local to it.
// kLoadFailed naming the library and the loader's reason when it cannot be loaded.
Result<void*> open_system_library(SystemLibrary library);

// A symbol of a library open_system_library returned; null when it has none.
void* system_library_symbol(void* library, const char* name);

// Fills a table of function pointers from a loaded library, each typed by the
// library's own declaration (`decltype(&::sqlite3_step)`), and remembers the
// first name the library lacks: one such name means it is not a build rung can use.
class SymbolBinder {
 public:
  explicit SymbolBinder(void* library) : library_(library) {}
  template <class F>
  void operator()(const char* name, F& fn) {
    fn = reinterpret_cast<F>(system_library_symbol(library_, name));
    if (fn == nullptr && missing_ == nullptr) missing_ = name;
  }
  const char* missing() const { return missing_; }

 private:
  void* library_;
  const char* missing_ = nullptr;
};

// Opens `library` and binds a table with `bind(binder, table)`, once per process
// (the first call's answer is kept; the library is never unloaded): the table, or
// why not ("<what>: libsqlite3.so.0 cannot be loaded: ...", "<what>:
// libsqlite3.so.0 has no sqlite3_step: ..."). `what` names the library for a
// reader and the package that provides it. One call site, one table.
template <class Table, class Bind>
Result<const Table*> bind_system_library(SystemLibrary library, const std::string& what, Bind bind) {
  static const Result<Table> bound = [&]() -> Result<Table> {
    auto handle = open_system_library(library);
    if (!handle) return Error{handle.error().code, what + ": " + handle.error().message};
    Table table{};
    SymbolBinder binder(*handle);
    bind(binder, table);
    if (binder.missing() != nullptr) {
      return Error{ErrorCode::kLoadFailed, what + ": " + system_library_name(library) + " has no " + binder.missing() + ": not a build rung can use"};
    }
    return table;
  }();
  if (!bound) return bound.error();
  return &*bound;
}

}  // namespace rung
