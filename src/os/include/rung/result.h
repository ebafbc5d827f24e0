// Status-or-value at the library's boundary (rung/status.h, stable), how an error
// is handed up inside rung (RUNG_RETURN_IF_ERROR), and the one exception that
// crosses the boundary inside rung's own programs: LibraryUnavailable.
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

// Hands a failed Status or Result's Error up as the calling function's own
// (abseil's RETURN_IF_ERROR): the one spelling of `if (!s) return s.error();`.
//   RUNG_RETURN_IF_ERROR(check_deadline(o.probe_deadline, "the deadline"));
// The function returns a Status or any Result; the expression may hold commas.
#define RUNG_RETURN_IF_ERROR(...)                                 \
  do {                                                            \
    if (auto rung_returned_ = (__VA_ARGS__); !rung_returned_) {   \
      return rung_returned_.error();                              \
    }                                                             \
  } while (false)
