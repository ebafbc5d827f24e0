# Windows x64 (mingw-w64; tests under wine): the part of rung ported so far,
# from the same sources, with src/os/windows/ in place of the POSIX files. It
# grows with the port (docs/windows.md says what is in it and what is not yet);
# tools/build-windows.sh configures it with cmake/toolchains/x86_64-w64-mingw32.cmake.

# fmt, nlohmann-json and CLI11 header-only, from Debian's own packages: Debian has
# no mingw builds of them, and their headers hold nothing of Linux. Linked into a
# folder of their own so the mingw compiler never sees the rest of /usr/include.
set(RUNG_WINDOWS_HEADERS "${PROJECT_BINARY_DIR}/header-only")
file(MAKE_DIRECTORY "${RUNG_WINDOWS_HEADERS}")
foreach(dir fmt nlohmann CLI)
  if(NOT EXISTS "${RUNG_WINDOWS_HEADERS}/${dir}")
    file(CREATE_LINK "/usr/include/${dir}" "${RUNG_WINDOWS_HEADERS}/${dir}" SYMBOLIC)
  endif()
endforeach()
add_library(rung_windows_headers INTERFACE)
target_include_directories(rung_windows_headers SYSTEM INTERFACE "${RUNG_WINDOWS_HEADERS}" "${RUNG_ORT_INCLUDE_DIR}")
target_compile_definitions(rung_windows_headers INTERFACE FMT_HEADER_ONLY UNICODE _UNICODE WIN32_LEAN_AND_MEAN NOMINMAX
                           _WIN32_WINNT=0x0A00)

set(RUNG_WARNINGS -Wall -Wextra -Wpedantic -Werror)
set(_s "${PROJECT_SOURCE_DIR}/src")
# src/os/ as the engine needs it on Windows, so far: libraries named and checked (PE) and
# loaded; the device described (DXGI's adapters, the CPU); the machine; SHA-256 (CNG);
# files written atomically (MoveFileExW); the cache lock (LockFileEx); the
# default directories (%LOCALAPPDATA%); this process (ending with its parent, priority, memory);
# files from outside read (regular files only); child processes (a Job Object, deadlines, crashes)
# and the line channel to a worker (a named pipe); file identities and the file-hash cache.
add_library(rung_os_windows STATIC
  ${_s}/os/windows/library_files.cpp ${_s}/os/windows/dynamic_library.cpp ${_s}/os/dynamic_library.cpp ${_s}/os/windows/text.cpp
  ${_s}/os/windows/hardware_description.cpp ${_s}/os/windows/machine.cpp ${_s}/os/windows/cpus.cpp
  ${_s}/os/sha256.cpp ${_s}/os/windows/sha256.cpp ${_s}/os/windows/atomic_file.cpp
  ${_s}/os/file_lock.cpp ${_s}/os/windows/file_lock.cpp ${_s}/os/windows/user_dirs.cpp ${_s}/os/windows/this_process.cpp
  ${_s}/os/read_file.cpp ${_s}/os/regular_file.cpp ${_s}/os/windows/opened_file.cpp
  ${_s}/os/child_environment.cpp ${_s}/os/windows/child_environment.cpp ${_s}/os/windows/child_process.cpp ${_s}/os/line_channel.cpp ${_s}/os/windows/line_channel.cpp
  ${_s}/os/file_hash.cpp ${_s}/os/windows/file_identity.cpp ${_s}/os/json_input.cpp)
target_include_directories(rung_os_windows PUBLIC "${_s}" "${PROJECT_SOURCE_DIR}/include")
target_link_libraries(rung_os_windows PUBLIC rung_windows_headers dxgi bcrypt advapi32 shell32 ole32 psapi)
target_compile_options(rung_os_windows PRIVATE ${RUNG_WARNINGS})

if(RUNG_BUILD_TESTS)
  enable_testing()
  add_subdirectory(/usr/src/googletest "${PROJECT_BINARY_DIR}/googletest" EXCLUDE_FROM_ALL)
  # The tests find the win32 builds tools/fetch-deps.sh --windows unpacked, by the
  # path wine gives this machine's root (Z:).
  set(RUNG_WINDOWS_TEST_DEPS "Z:${RUNG_DEPS_DIR}/windows")
  # What the host tree's tests run under wine and read back (tests/windows-description-test.sh).
  add_executable(describe-hardware "${PROJECT_SOURCE_DIR}/tests/windows/describe-hardware.cc")
  target_link_libraries(describe-hardware PRIVATE rung_os_windows)
  file(GLOB _tests CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/tests/windows/*-test.cc")
  foreach(src IN LISTS _tests)
    get_filename_component(name "${src}" NAME_WE)
    add_executable(${name} "${src}")
    target_link_libraries(${name} PRIVATE rung_os_windows GTest::gtest_main GTest::gmock)
    target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/tests")  # the bodies shared with Linux's tests
    target_compile_options(${name} PRIVATE ${RUNG_WARNINGS})
    target_compile_definitions(${name} PRIVATE RUNG_TEST_WINDOWS_DEPS="${RUNG_WINDOWS_TEST_DEPS}")
    # One ctest per executable: each start of wine costs seconds, so its tests run in one process.
    add_test(NAME windows.${name} COMMAND ${name} --gtest_brief=1)
    set_tests_properties(windows.${name} PROPERTIES TIMEOUT 300)
  endforeach()
endif()
