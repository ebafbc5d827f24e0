// System libraries a command needs only sometimes, loaded on first use instead
// of at exec: a library linked into the CLI costs every launch its loading and
// binding (libpq alone brings Kerberos, LDAP, GnuTLS and SASL: about 5 ms of a
// warm `rung probe`), although only a postgresql:// registry uses it.
#pragma once

#include <string>

#include "rung/result.h"

namespace rung {

enum class SystemLibrary {
  kPostgresClient,  // libpq: the registry on PostgreSQL
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

}  // namespace rung
