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
# CLI11_HAS_FILESYSTEM 0: CLI11's path validators (rung uses none) would make paths from narrow text.
target_compile_definitions(rung_windows_headers INTERFACE FMT_HEADER_ONLY ORT_API_MANUAL_INIT UNICODE _UNICODE WIN32_LEAN_AND_MEAN NOMINMAX CLI11_HAS_FILESYSTEM=0
                           _WIN32_WINNT=0x0A00)

set(_s "${PROJECT_SOURCE_DIR}/src")
# src/os/ as the engine needs it on Windows, so far: libraries named and checked (PE) and
# loaded; the device described (DXGI's adapters, the CPU); the machine; SHA-256 (CNG);
# files written atomically (MoveFileExW); the cache lock (LockFileEx); the
# default directories (%LOCALAPPDATA%); the kernel files of a Linux fixture tree; this process (ending with its parent, priority, memory);
# files from outside read (regular files only); child processes (a Job Object, deadlines, crashes)
# and the line channel to a worker (a named pipe); file identities and the file-hash cache.
set(RUNG_WINDOWS_OS_SOURCES
  ${_s}/os/windows/library_files.cpp ${_s}/os/windows/dynamic_library.cpp ${_s}/os/dynamic_library.cpp ${_s}/os/windows/text.cpp ${_s}/os/path_text.cpp
  ${_s}/os/directory.cpp ${_s}/os/windows/directory.cpp ${_s}/os/windows/long_path.cpp
  ${_s}/os/windows/hardware_description.cpp ${_s}/os/windows/machine.cpp ${_s}/os/windows/cpus.cpp
  ${_s}/os/sha256.cpp ${_s}/os/windows/sha256.cpp ${_s}/os/windows/atomic_file.cpp
  ${_s}/os/file_lock.cpp ${_s}/os/windows/file_lock.cpp ${_s}/os/windows/user_dirs.cpp ${_s}/os/windows/this_process.cpp
  ${_s}/os/read_file.cpp ${_s}/os/regular_file.cpp ${_s}/os/windows/opened_file.cpp ${_s}/os/kernel_files.cpp
  ${_s}/os/child_environment.cpp ${_s}/os/windows/child_environment.cpp ${_s}/os/windows/child_process.cpp ${_s}/os/line_channel.cpp ${_s}/os/windows/line_channel.cpp
  ${_s}/os/file_hash.cpp ${_s}/os/windows/file_identity.cpp ${_s}/os/json_input.cpp ${_s}/os/json_text.cpp ${_s}/os/utf8.cpp ${_s}/os/printable.cpp ${_s}/os/print.cpp
  ${_s}/os/windows/security.cpp ${_s}/os/windows/path_trust.cpp ${_s}/os/work_dir.cpp ${_s}/os/windows/fresh_dir.cpp
  ${_s}/os/process_identity.cpp ${_s}/os/windows/process_identity.cpp ${_s}/os/progress_file.cpp ${_s}/os/windows/progress_file.cpp
  ${_s}/os/termination.cpp ${_s}/os/windows/termination.cpp ${_s}/os/utc_now.cpp ${_s}/os/output_paths.cpp ${_s}/os/input_check.cpp ${_s}/os/command_line.cpp
  ${_s}/os/worker_location.cpp ${_s}/os/environment.cpp ${_s}/os/setting_names.cpp ${_s}/os/windows/loader_search.cpp)
add_library(rung_os_windows STATIC ${RUNG_WINDOWS_OS_SOURCES})
# Every header of rung as "rung/<name>.h" (cmake/rung_headers.cmake).
include("${PROJECT_SOURCE_DIR}/cmake/rung_headers.cmake")
rung_header_view("${PROJECT_SOURCE_DIR}" "${PROJECT_BINARY_DIR}/headers")
target_include_directories(rung_os_windows PUBLIC "${_s}" "${PROJECT_BINARY_DIR}/headers")
target_link_libraries(rung_os_windows PUBLIC rung_windows_headers dxgi bcrypt advapi32 shell32 ole32 psapi)
target_compile_options(rung_os_windows PRIVATE ${RUNG_WARNINGS})
target_compile_definitions(rung_os_windows PRIVATE RUNG_LIBEXEC_FROM_BINDIR="." RUNG_LIBEXEC_FROM_LIBDIR=".")

# The engine's core on Windows: every engine concept but what reads ONNX protobuf,
# which Debian builds for no mingw. Its two readers are built in their
# protobuf-free forms (*_without_onnx.cpp): recorded tensors in the one message
# rung writes itself, and control-flow models refused an engine with that reason.
set(RUNG_WINDOWS_ENGINE_SOURCES "")
foreach(concept core rungs runtime session jobs probe engine variants)
  file(GLOB _c CONFIGURE_DEPENDS "${_s}/${concept}/*.cpp")
  list(APPEND RUNG_WINDOWS_ENGINE_SOURCES ${_c})
endforeach()
list(FILTER RUNG_WINDOWS_ENGINE_SOURCES EXCLUDE REGEX "/session/tensor_file.cpp$")
list(APPEND RUNG_WINDOWS_ENGINE_SOURCES ${_s}/session/tensor_file_without_onnx.cpp ${_s}/graph/compile_ready_without_onnx.cpp)
add_library(rung_engine_windows STATIC ${RUNG_WINDOWS_ENGINE_SOURCES})
include("${PROJECT_SOURCE_DIR}/cmake/rung_modules.cmake")
rung_module_list("${PROJECT_BINARY_DIR}/rungs")
target_include_directories(rung_engine_windows PRIVATE "${PROJECT_BINARY_DIR}/rungs")
target_link_libraries(rung_engine_windows PUBLIC rung_os_windows)
target_compile_options(rung_engine_windows PRIVATE ${RUNG_WARNINGS})
target_compile_definitions(rung_engine_windows PRIVATE
  RUNG_DATA_FROM_BINDIR="share/rung" RUNG_DATA_FROM_LIBDIR="share/rung"
  RUNG_LIBEXEC_FROM_BINDIR="." RUNG_LIBEXEC_FROM_LIBDIR="." RUNG_VERSION="${PROJECT_VERSION}")

# Both programs carry a manifest declaring them long-path aware (resource 1 of
# type 24, RT_MANIFEST): Windows gives a program paths past MAX_PATH only then.
enable_language(RC)
set(RUNG_WINDOWS_MANIFEST_RC "${PROJECT_BINARY_DIR}/long_paths.rc")
file(WRITE "${RUNG_WINDOWS_MANIFEST_RC}" "1 24 \"${_s}/os/windows/long_paths.manifest\"\n")
set_source_files_properties("${RUNG_WINDOWS_MANIFEST_RC}" PROPERTIES OBJECT_DEPENDS "${_s}/os/windows/long_paths.manifest")

# The worker and `rung.exe` (doctor, probe and prepare): one program, not the
# Linux front and rung-full, since Windows has no exec to hand a command on with.
add_executable(rung_probe_worker_windows "${PROJECT_SOURCE_DIR}/worker/windows_main.cpp" "${PROJECT_SOURCE_DIR}/worker/kinds.cpp"
  "${RUNG_WINDOWS_MANIFEST_RC}")
target_link_options(rung_probe_worker_windows PRIVATE -municode)
set_target_properties(rung_probe_worker_windows PROPERTIES OUTPUT_NAME rung-probe-worker RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}")
target_link_libraries(rung_probe_worker_windows PRIVATE rung_engine_windows)
set(_cli "${PROJECT_SOURCE_DIR}/cli")
set(RUNG_WINDOWS_CLI_SOURCES ${_cli}/windows_main.cpp ${_cli}/doctor.cpp ${_cli}/probe.cpp ${_cli}/prepare.cpp ${_cli}/program.cpp ${_cli}/command_line.cpp
  ${_cli}/exit_code.cpp ${_cli}/json_output.cpp ${_cli}/model_args.cpp ${_cli}/numeric_args.cpp ${_cli}/output_check.cpp
  ${_cli}/progress.cpp ${_cli}/reason_notes.cpp ${_cli}/runtime_args.cpp ${_cli}/variants_args.cpp)
add_executable(rung_windows ${RUNG_WINDOWS_CLI_SOURCES} "${RUNG_WINDOWS_MANIFEST_RC}")
target_link_options(rung_windows PRIVATE -municode)
set_target_properties(rung_windows PROPERTIES OUTPUT_NAME rung RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}")
target_link_libraries(rung_windows PRIVATE rung_engine_windows)
target_compile_definitions(rung_windows PRIVATE RUNG_VERSION="${PROJECT_VERSION}"
  RUNG_DEFAULT_DEPS_DIR="${RUNG_DEPS_DIR}"
  RUNG_SPECS_DIR="${PROJECT_SOURCE_DIR}/specs" RUNG_INSTALLED_SPECS_DIR="${CMAKE_INSTALL_FULL_DATADIR}/rung/specs"
  RUNG_MANIFESTS_DIR="${PROJECT_SOURCE_DIR}/manifests" RUNG_INSTALLED_MANIFESTS_DIR="${CMAKE_INSTALL_FULL_DATADIR}/rung/manifests")
target_compile_options(rung_windows PRIVATE ${RUNG_WARNINGS})

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
    target_link_libraries(${name} PRIVATE rung_engine_windows GTest::gtest_main GTest::gmock)
    # abi-*: an application of rung_engine.dll, through the C ABI.
    if(name MATCHES "^abi-")
      target_link_libraries(${name} PRIVATE rung_engine_dll)
    endif()
    target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/tests")  # the bodies shared with Linux's tests
    target_compile_options(${name} PRIVATE ${RUNG_WARNINGS})
    target_compile_definitions(${name} PRIVATE RUNG_TEST_WINDOWS_DEPS="${RUNG_WINDOWS_TEST_DEPS}" RUNG_TEST_MODELS="Z:${RUNG_DEPS_DIR}/models")
    # One ctest per executable: each start of wine costs seconds, so its tests run in one process.
    add_test(NAME windows.${name} COMMAND ${name} --gtest_brief=1)
    set_tests_properties(windows.${name} PROPERTIES TIMEOUT 300)
  endforeach()
  # The objects the OS seam check reads on this build (tools/check-os-seam.py --system windows; the host
  # tree's ctest runs it), and two planted bypasses it must find: a Win32 import declared by hand, APPDATA.
  set(_seam rung_engine_windows rung_windows rung_probe_worker_windows rung_engine_dll rung_sim_ep_windows)
  list(TRANSFORM _seam REPLACE "(.+)" "$<TARGET_OBJECTS:\\1>" OUTPUT_VARIABLE _seam_objects)
  file(GENERATE OUTPUT "${PROJECT_BINARY_DIR}/os-seam-objects.txt" CONTENT "$<JOIN:${_seam_objects},\n>\n")
  file(GLOB _seam_planted CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/tests/fixtures/guards/windows/os-*.cc")
  add_library(rung_os_seam_planted_windows OBJECT ${_seam_planted})
  file(GENERATE OUTPUT "${PROJECT_BINARY_DIR}/os-seam-planted-objects.txt"
    CONTENT "$<JOIN:$<TARGET_OBJECTS:rung_os_seam_planted_windows>,\n>\n")
endif()

# The win32 builds tools/fetch-deps.sh --windows unpacked, linked beside rung.exe:
# `runtimes\*\` beside the program is where discovery looks first, as on Linux.
rung_link_runtimes_beside_programs("${RUNG_DEPS_DIR}/windows/runtimes")

# The simulated accelerator as a DLL plugin EP (plugins\rung_sim_ep.dll beside
# rung.exe, as plugins/librung_sim_ep.so on Linux): the same sources, its exports
# named by sim_ep.def.
set(_sim "${PROJECT_SOURCE_DIR}/plugins/sim-accelerator")
add_library(rung_sim_ep_windows SHARED ${_sim}/sim_ep.cpp ${_sim}/sim_ep_knobs.cpp ${_sim}/sim_ep_fork.cpp ${_sim}/sim_ep_kernels.cpp ${_sim}/sim_ep_memo.cpp
  ${_sim}/sim_ep_ort.cpp ${_sim}/sim_ep.def)
target_link_libraries(rung_sim_ep_windows PRIVATE rung_windows_headers)
target_compile_definitions(rung_sim_ep_windows PRIVATE "RUNG_SIM_EP_EXPORT=extern \"C\"")
target_compile_options(rung_sim_ep_windows PRIVATE ${RUNG_WARNINGS})
set_target_properties(rung_sim_ep_windows PROPERTIES PREFIX "" OUTPUT_NAME rung_sim_ep RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/plugins")

# rung::engine as Windows has it: rung_engine.dll, the C ABI (include/rung/rung.h)
# over the engine's core, exporting the rung_ functions alone (RUNG_API is
# __declspec(dllexport) while it builds, so nothing else is exported), and the C
# example linked against it as an application would be.
add_library(rung_engine_dll SHARED ${_s}/capi/abi.cpp ${_s}/capi/options.cpp)
target_link_libraries(rung_engine_dll PRIVATE rung_engine_windows)
target_compile_definitions(rung_engine_dll PRIVATE RUNG_BUILDING_ABI RUNG_VERSION="${PROJECT_VERSION}")
target_compile_options(rung_engine_dll PRIVATE ${RUNG_WARNINGS})
set_target_properties(rung_engine_dll PROPERTIES PREFIX "" OUTPUT_NAME rung_engine RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}")
add_executable(c_classify_windows "${PROJECT_SOURCE_DIR}/examples/c/classify.c")
target_link_libraries(c_classify_windows PRIVATE rung_engine_dll)
target_include_directories(c_classify_windows PRIVATE "${PROJECT_SOURCE_DIR}/include")
set_target_properties(c_classify_windows PROPERTIES OUTPUT_NAME c-classify RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}"
  C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(c_classify_windows PRIVATE ${RUNG_C_WARNINGS})

# Text becomes a path only through rung/path_text.h (UTF-8 read as UTF-8): a
# std::filesystem::path made from a narrow string is read in the code page here.
# The same sources compiled without inlining keep every conversion they make
# as a template instance; tools/check-windows-path-text.py fails on any made
# from a std::string, string_view or char pointer (a literal's char[N] is ASCII
# and allowed), and on a directory iterator or remove_all (rung/directory.h).
add_library(rung_windows_path_text_check OBJECT ${RUNG_WINDOWS_OS_SOURCES} ${RUNG_WINDOWS_ENGINE_SOURCES} ${RUNG_WINDOWS_CLI_SOURCES}
  ${_s}/capi/abi.cpp ${_s}/capi/options.cpp "${PROJECT_SOURCE_DIR}/worker/windows_main.cpp" "${PROJECT_SOURCE_DIR}/worker/kinds.cpp")
target_link_libraries(rung_windows_path_text_check PRIVATE rung_windows_headers)
target_include_directories(rung_windows_path_text_check PRIVATE "${_s}" "${PROJECT_BINARY_DIR}/headers" "${PROJECT_BINARY_DIR}/rungs")
target_compile_options(rung_windows_path_text_check PRIVATE -O0 -fno-inline -w -Wa,-mbig-obj)
target_compile_definitions(rung_windows_path_text_check PRIVATE RUNG_BUILDING_ABI RUNG_VERSION="${PROJECT_VERSION}"
  RUNG_DATA_FROM_BINDIR="share/rung" RUNG_DATA_FROM_LIBDIR="share/rung" RUNG_LIBEXEC_FROM_BINDIR="." RUNG_LIBEXEC_FROM_LIBDIR="."
  RUNG_DEFAULT_DEPS_DIR="${RUNG_DEPS_DIR}" RUNG_SPECS_DIR="${PROJECT_SOURCE_DIR}/specs" RUNG_INSTALLED_SPECS_DIR="${CMAKE_INSTALL_FULL_DATADIR}/rung/specs"
  RUNG_MANIFESTS_DIR="${PROJECT_SOURCE_DIR}/manifests" RUNG_INSTALLED_MANIFESTS_DIR="${CMAKE_INSTALL_FULL_DATADIR}/rung/manifests")
set_target_properties(rung_windows_path_text_check PROPERTIES UNITY_BUILD OFF)  # a finding names its source
file(GENERATE OUTPUT "${PROJECT_BINARY_DIR}/path-text-check-objects.txt" CONTENT "$<JOIN:$<TARGET_OBJECTS:rung_windows_path_text_check>,\n>\n")
# And an object that makes a path from a std::string, which the check must refuse.
add_library(rung_windows_path_text_planted OBJECT "${PROJECT_SOURCE_DIR}/tests/windows/planted_narrow_path.cc")
target_compile_options(rung_windows_path_text_planted PRIVATE -O0 -fno-inline)
file(GENERATE OUTPUT "${PROJECT_BINARY_DIR}/path-text-planted-objects.txt" CONTENT "$<JOIN:$<TARGET_OBJECTS:rung_windows_path_text_planted>,\n>\n")
if(RUNG_BUILD_TESTS)
  add_test(NAME windows.text_becomes_a_path_in_one_place
    COMMAND /usr/bin/python3 "${PROJECT_SOURCE_DIR}/tools/check-windows-path-text.py" --nm "${CMAKE_NM}" --objdump "${CMAKE_OBJDUMP}"
            "${PROJECT_BINARY_DIR}/path-text-check-objects.txt")
  add_test(NAME windows.programs_declare_long_paths
    COMMAND /usr/bin/python3 "${PROJECT_SOURCE_DIR}/tools/check-windows-manifest.py" --windres "${CMAKE_RC_COMPILER}"
            $<TARGET_FILE:rung_windows> $<TARGET_FILE:rung_probe_worker_windows>)
  # A program built without the manifest is refused by name.
  add_test(NAME windows.manifest_check_refuses_a_program_without_one
    COMMAND /usr/bin/python3 "${PROJECT_SOURCE_DIR}/tools/check-windows-manifest.py" --windres "${CMAKE_RC_COMPILER}"
            $<TARGET_FILE:rung_windows> $<TARGET_FILE:describe-hardware>)
  set_tests_properties(windows.manifest_check_refuses_a_program_without_one PROPERTIES
    PASS_REGULAR_EXPRESSION "describe-hardware.exe: .*no resource section.*FAIL: 1 of 2")
  add_test(NAME windows.path_text_check_refuses_a_planted_conversion
    COMMAND /usr/bin/python3 "${PROJECT_SOURCE_DIR}/tools/check-windows-path-text.py" --nm "${CMAKE_NM}" "${PROJECT_BINARY_DIR}/path-text-planted-objects.txt")
  # Each planted way (a std::string, a string_view, a char pointer, remove_all) found by name.
  set_tests_properties(windows.path_text_check_refuses_a_planted_conversion PROPERTIES
    PASS_REGULAR_EXPRESSION "FAIL: 4 narrow conversion")
endif()
