# What differs between the systems rung builds for, said once for the one build
# description (Linux x86-64, aarch64 cross-built, and Windows x64 cross-built with
# mingw-w64 by tools/build-windows.sh). Every CMakeLists.txt of the tree is the
# same on each; where a concept's sources differ, the concept chooses them
# (src/CMakeLists.txt), by these variables and nothing else:
#
#   RUNG_SYSTEM                posix or windows: which src/os/<system>/ is built
#   RUNG_WITH_ONNX_PROTOBUF    whether ONNX's protobuf classes (and libonnx) exist;
#                              without them the tools are not built and the two
#                              readers that need them are built in their
#                              protobuf-free forms (src/<concept>/sources.cmake)
#   RUNG_SYSTEM_LIBRARIES      what the engine's src/os/ links on this system
#   rung_system                an interface target: the system's compile definitions
#   rung_program(target)       what every program of rung needs on this system
if(WIN32)
  set(RUNG_SYSTEM windows)
  # Debian builds no ONNX protobuf, SQLite, libpq or OpenSSL for mingw: Windows has the
  # engine, the C ABI, the worker and `rung` (doctor, probe, prepare); docs/windows.md.
  set(RUNG_WITH_ONNX_PROTOBUF OFF)
  set(RUNG_SYSTEM_LIBRARIES dxgi bcrypt advapi32 shell32 ole32 psapi)
else()
  set(RUNG_SYSTEM posix)
  set(RUNG_WITH_ONNX_PROTOBUF ON)
  set(RUNG_SYSTEM_LIBRARIES ${CMAKE_DL_LIBS})
endif()

add_library(rung_system INTERFACE)
find_package(Threads REQUIRED)
if(WIN32)
  # fmt, nlohmann-json and CLI11 header-only, from Debian's own packages: Debian has
  # no mingw builds of them, and their headers hold nothing of Linux. Linked into a
  # folder of their own so the mingw compiler never sees the rest of /usr/include.
  set(RUNG_HEADER_ONLY_DIR "${PROJECT_BINARY_DIR}/header-only")
  file(MAKE_DIRECTORY "${RUNG_HEADER_ONLY_DIR}")
  foreach(dir fmt nlohmann CLI)
    if(NOT EXISTS "${RUNG_HEADER_ONLY_DIR}/${dir}")
      file(CREATE_LINK "/usr/include/${dir}" "${RUNG_HEADER_ONLY_DIR}/${dir}" SYMBOLIC)
    endif()
  endforeach()
  add_library(fmt::fmt INTERFACE IMPORTED)
  set_target_properties(fmt::fmt PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${RUNG_HEADER_ONLY_DIR}"
    INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY)
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  set_target_properties(nlohmann_json::nlohmann_json PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${RUNG_HEADER_ONLY_DIR}")
  # CLI11_HAS_FILESYSTEM 0: CLI11's path validators (rung uses none) would make paths from narrow text.
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  set_target_properties(CLI11::CLI11 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${RUNG_HEADER_ONLY_DIR}"
    INTERFACE_COMPILE_DEFINITIONS CLI11_HAS_FILESYSTEM=0)
  # Wide Win32 calls, the Windows 10 API, and no min/max macros.
  target_compile_definitions(rung_system INTERFACE UNICODE _UNICODE WIN32_LEAN_AND_MEAN NOMINMAX _WIN32_WINNT=0x0A00)
else()
  find_package(fmt REQUIRED)
  find_package(nlohmann_json 3 REQUIRED)
  find_package(CLI11 REQUIRED)
  find_package(OpenSSL REQUIRED)
  find_package(Protobuf REQUIRED)
  find_package(ONNX REQUIRED)
endif()

# Both kinds of Windows program carry a manifest declaring them long-path aware
# (resource 1 of type 24, RT_MANIFEST): Windows gives a program paths past MAX_PATH
# only then; and their entry point is wmain (wide arguments). Nothing on Linux.
if(WIN32)
  enable_language(RC)
  set(RUNG_LONG_PATHS_RC "${PROJECT_BINARY_DIR}/long_paths.rc")
  file(WRITE "${RUNG_LONG_PATHS_RC}" "1 24 \"${PROJECT_SOURCE_DIR}/src/os/windows/long_paths.manifest\"\n")
  set_source_files_properties("${RUNG_LONG_PATHS_RC}" PROPERTIES
    OBJECT_DEPENDS "${PROJECT_SOURCE_DIR}/src/os/windows/long_paths.manifest")
endif()
function(rung_program target)
  if(WIN32)
    target_sources(${target} PRIVATE "${RUNG_LONG_PATHS_RC}")
    target_link_options(${target} PRIVATE -municode)
  endif()
endfunction()
