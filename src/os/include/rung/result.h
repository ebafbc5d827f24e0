// Status-or-value at the library's boundary (rung/status.h, stable), and the one
// exception that crosses it inside rung's own programs: LibraryUnavailable.
#pragma once

#include <stdexcept>

#include "rung/status.h"

namespace rung {

// Thrown by a call that has no error to return when a system library it cannot
// do without will not load (SHA-256 without OpenSSL's libcrypto: such libraries
// are loaded on first use, os/system_library.h). Its message names the library,
// the loader's reason and the package that provides it. The C ABI returns it as
// an error; the CLI prints it and exits 1.
struct LibraryUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace rung
