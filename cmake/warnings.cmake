# One warning set for rung's own code in every build: Linux (x86-64, and aarch64
# cross-built) and Windows (mingw-w64) alike. Warnings are errors (RUNG_WERROR,
# on unless turned off), so the README's commands, which CI runs, stop at the
# first one on any platform. A newer compiler than Debian 12's g++ 12 may warn
# where this one does not: -DRUNG_WERROR=OFF builds there, and says what to mend.
option(RUNG_WERROR "Treat a warning in rung's own code as an error" ON)
set(RUNG_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Wnon-virtual-dtor -Wold-style-cast)
# The C example (C99, examples/c/) gets what of it C has.
set(RUNG_C_WARNINGS -Wall -Wextra -Wpedantic)
if(RUNG_WERROR)
  list(APPEND RUNG_WARNINGS -Werror)
  list(APPEND RUNG_C_WARNINGS -Werror)
endif()
