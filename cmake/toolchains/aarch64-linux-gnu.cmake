# Linux aarch64, cross-built on an x86-64 Debian 12 machine:
#   Debian's cross toolchain (g++-aarch64-linux-gnu) for the compiler, the C library and
#   libstdc++ (/usr/aarch64-linux-gnu); the arm64 libraries rung links against from the
#   private sysroot tools/fetch-deps.sh --aarch64 unpacks into $RUNG_DEPS_DIR/aarch64.
# Used by tools/build-aarch64.sh; what it builds runs under qemu through tools/aarch64-run.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(DEFINED ENV{RUNG_DEPS_DIR})
  set(_rung_host_deps "$ENV{RUNG_DEPS_DIR}")
else()
  set(_rung_host_deps "$ENV{HOME}/.cache/rung")
endif()
set(RUNG_AARCH64_SYSROOT "${_rung_host_deps}/aarch64/sysroot" CACHE PATH "The arm64 libraries (tools/fetch-deps.sh --aarch64)")
if(NOT EXISTS "${RUNG_AARCH64_SYSROOT}/.stamp")
  message(FATAL_ERROR "no arm64 sysroot in ${RUNG_AARCH64_SYSROOT}: run tools/fetch-deps.sh --aarch64 first")
endif()
# The arm64 runtimes, with the shared headers and models beside them.
set(RUNG_DEPS_DIR "${_rung_host_deps}/aarch64" CACHE PATH "" FORCE)

set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu "${RUNG_AARCH64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)   # protoc, python and the like are the host's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# The sysroot holds no C library: its headers go after the toolchain's own
# (usr/include/aarch64-linux-gnu holds openssl/opensslconf.h and the like).
foreach(lang C CXX)
  set(CMAKE_${lang}_STANDARD_INCLUDE_DIRECTORIES
      "${RUNG_AARCH64_SYSROOT}/usr/include/aarch64-linux-gnu" "${RUNG_AARCH64_SYSROOT}/usr/include")
endforeach()
# Libraries are in usr/lib/aarch64-linux-gnu, and zlib in lib/aarch64-linux-gnu (the .debs
# predate the merged /usr).
set(_rung_sysroot_libs "${RUNG_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu" "${RUNG_AARCH64_SYSROOT}/lib/aarch64-linux-gnu")
set(_rung_link_flags "")
foreach(dir IN LISTS _rung_sysroot_libs)
  string(APPEND _rung_link_flags " -L${dir} -Wl,-rpath-link,${dir}")
endforeach()
# Binaries in the build tree find the sysroot's libraries by their run path (nothing
# installed system-wide, no LD_LIBRARY_PATH that host programs would see too). DT_RPATH,
# not DT_RUNPATH: the sysroot's own libraries carry none, and only DT_RPATH is searched
# for what they need in turn (libprotobuf's libz).
foreach(kind EXE SHARED MODULE)
  set(CMAKE_${kind}_LINKER_FLAGS_INIT "${_rung_link_flags} -Wl,--disable-new-dtags")
endforeach()
set(CMAKE_BUILD_RPATH ${_rung_sysroot_libs})

# ctest, gtest discovery and spawned programs run under qemu-aarch64.
get_filename_component(_rung_source "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
set(CMAKE_CROSSCOMPILING_EMULATOR "${_rung_source}/tools/aarch64-run")
