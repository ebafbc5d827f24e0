# Script for the install test: install, then configure, build and run clean
# consumer projects against the install tree with find_package.
#   the tools consumer links rung::rung;
#   the engine consumer (C++, rung/engine.h) and the C example (examples/c)
#   link rung::engine alone, configured with every development package but
#   rung's hidden from find_package, and the exported engine target must name
#   none of them;
#   librung_engine exports rung_ symbols alone, and the worker an application
#   ships links no SQLite, libpq, stb or libonnx.
file(REMOVE_RECURSE "${SCRATCH}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${SCRATCH}/prefix" RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()

# What a consumer of rung::engine is asked to link: Threads and nothing else.
# (The per-configuration file may list the engine's own private shared
# libraries for the linker's rpath-link; a consumer never links those.)
file(GLOB engine_exports "${SCRATCH}/prefix/lib*/cmake/rung/rungEngineTargets.cmake")
foreach(f IN LISTS engine_exports)
  file(STRINGS "${f}" links REGEX "INTERFACE_LINK_LIBRARIES")
  if(links MATCHES "(onnx|protobuf|stb|fmt|nlohmann|OpenSSL)")
    message(FATAL_ERROR "${f} asks consumers of rung::engine to link ${CMAKE_MATCH_1}: the engine must not need it")
  endif()
endforeach()

# The engine's only exports are the C ABI's functions.
file(GLOB engine_library "${SCRATCH}/prefix/lib*/librung_engine.so.1")
if(NOT engine_library)
  message(FATAL_ERROR "no librung_engine.so.1 installed (its soname is the ABI's major version)")
endif()
execute_process(COMMAND nm -D --defined-only ${engine_library} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "nm failed on ${engine_library}")
endif()
string(REGEX MATCHALL "[^\n]+" symbol_lines "${symbols}")
set(abi_count 0)
foreach(line IN LISTS symbol_lines)
  string(REGEX REPLACE "^.* " "" name "${line}")
  if(NOT name MATCHES "^rung_")
    message(FATAL_ERROR "${engine_library} exports ${name}: only rung_ symbols may leave it")
  endif()
  math(EXPR abi_count "${abi_count} + 1")
endforeach()
if(abi_count LESS 40)
  message(FATAL_ERROR "${engine_library} exports only ${abi_count} rung_ symbols: the C ABI is missing")
endif()
message("librung_engine exports ${abi_count} rung_ symbols and nothing else")

# A kit is relocatable: neither the engine nor its worker names the prefix the build was configured for
# (each finds its parts from where it was loaded), and the engine's third-party libraries lie beside it.
file(GLOB kit_worker "${SCRATCH}/prefix/libexec/rung/rung-probe-worker")
foreach(f IN ITEMS ${engine_library} ${kit_worker})
  file(STRINGS "${f}" named REGEX "${CONFIGURED_PREFIX}/")
  if(named)
    list(GET named 0 first)
    message(FATAL_ERROR "${f} names the configured install prefix ${CONFIGURED_PREFIX}: '${first}'")
  endif()
endforeach()
foreach(lib libfmt.so.9 libprotobuf.so.32 libonnx_proto.so.1)
  file(GLOB beside "${SCRATCH}/prefix/lib*/${lib}")
  if(NOT beside)
    message(FATAL_ERROR "the kit's lib/ lacks ${lib}, which librung_engine needs")
  endif()
endforeach()
file(GLOB kit_runtime "${SCRATCH}/prefix/share/rung/runtimes/*/libonnxruntime.so*")
if(NOT kit_runtime)
  message(FATAL_ERROR "the kit ships no ONNX Runtime build in share/rung/runtimes")
endif()
message("the kit names no install prefix and carries its libraries and runtime")

# The worker an application ships beside the engine links what the engine links, no more.
file(GLOB worker "${SCRATCH}/prefix/libexec/rung/rung-probe-worker")
execute_process(COMMAND readelf -d ${worker} OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(rc OR NOT worker)
  message(FATAL_ERROR "readelf failed on the installed worker '${worker}'")
endif()
if(dynamic MATCHES "\\[(libsqlite3[^]]*|libpq[^]]*|libstb[^]]*|libonnx\\.so[^]]*)\\]")
  message(FATAL_ERROR "the installed worker links ${CMAKE_MATCH_1}: it must carry only what the engine carries")
endif()

# The installed front finds rung-full beside it, under the prefix given at install time.
execute_process(COMMAND env -u RUNG_ORT_DIR "${SCRATCH}/prefix/bin/rung" --version RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc OR NOT out MATCHES "^rung [0-9]")
  message(FATAL_ERROR "the installed rung --version (through bin/rung-full) failed: ${rc} ${out}${err}")
endif()
message("the installed rung hands --version to bin/rung-full")

# Nothing installed looks for libraries in the working directory (an empty or relative RPATH/RUNPATH entry).
execute_process(COMMAND "${PYTHON}" "${SEARCH_PATH_CHECK}" "${SCRATCH}/prefix" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "the installed tree searches the working directory for libraries:\n${out}${err}")
endif()
message("installed tree: ${out}")

# An application of rung::engine is configured with the tools' development packages hidden.
set(without_tool_packages
  -DCMAKE_DISABLE_FIND_PACKAGE_fmt=ON -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_OpenSSL=ON -DCMAKE_DISABLE_FIND_PACKAGE_Protobuf=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_ONNX=ON)

function(consumer name source)
  if(NOT DEFINED consumer_prefix)
    set(consumer_prefix "${SCRATCH}/prefix")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${source}" -B "${SCRATCH}/${name}" "-DCMAKE_PREFIX_PATH=${consumer_prefix}" ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "${name} configure failed:\n${out}\n${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build "${SCRATCH}/${name}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "${name} build failed:\n${out}\n${err}")
  endif()
endfunction()

consumer(tools "${CONSUMER_SOURCE}")
execute_process(COMMAND "${SCRATCH}/tools/consumer" "${RUNTIMES}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(rc)
  message(FATAL_ERROR "tools consumer failed: ${err}")
endif()

consumer(engine "${ENGINE_CONSUMER_SOURCE}"
  ${without_tool_packages})
execute_process(COMMAND "${SCRATCH}/engine/engine_consumer" "${RUNTIMES}/onnxruntime-1.30.0" "${MODEL}" "${worker}" "${SCRATCH}/engine-cache"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(rc)
  message(FATAL_ERROR "engine consumer failed: ${err}")
endif()

# The C example, as an application in C builds it: a C compiler and rung's engine package.
consumer(c "${C_EXAMPLE_SOURCE}"
  ${without_tool_packages} -DCMAKE_DISABLE_FIND_PACKAGE_SQLite3=ON -DCMAKE_DISABLE_FIND_PACKAGE_PostgreSQL=ON)
execute_process(COMMAND "${SCRATCH}/c/classify" "${MODEL}" "${C_INPUT}" "${SCRATCH}/c-cache"
                        "runtime_dir=${RUNTIMES}/onnxruntime-1.30.0" runtime_default_locations=false "worker=${worker}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(rc)
  message(FATAL_ERROR "the C example failed: ${err}")
endif()

# pkg-config finds the same library.
file(GLOB pc_dir "${SCRATCH}/prefix/lib*/pkgconfig")
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${pc_dir}" pkg-config --libs --cflags rung-engine
                RESULT_VARIABLE rc OUTPUT_VARIABLE flags ERROR_VARIABLE err)
if(rc OR NOT flags MATCHES "-L[^ ]*prefix/lib[^ ]* -Wl,-rpath,[^ ]*prefix/[^ ]*lib -lrung_engine")
  message(FATAL_ERROR "pkg-config rung-engine: ${flags}${err}")
endif()
message("pkg-config rung-engine: ${flags}")

# Every header the tools component installs compiles alone against the installed
# prefix: none reaches for a header that is not installed (the command line's own
# helpers, a concept's private headers under src/).
file(GLOB tool_headers RELATIVE "${SCRATCH}/prefix/include" "${SCRATCH}/prefix/include/rung/*.h")
list(LENGTH tool_headers tool_header_count)
if(tool_header_count LESS 30)
  message(FATAL_ERROR "the full install holds only ${tool_header_count} headers under include/rung/")
endif()
set(header_check "${SCRATCH}/header-check")
file(MAKE_DIRECTORY "${header_check}")
foreach(header IN LISTS tool_headers)
  get_filename_component(stem "${header}" NAME_WE)
  file(WRITE "${header_check}/${stem}.cpp" "#include \"${header}\"\n")
  execute_process(COMMAND "${CXX}" -std=c++20 -fsyntax-only -I "${SCRATCH}/prefix/include"
                          "${header_check}/${stem}.cpp"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "the installed ${header} does not compile alone:\n${out}${err}")
  endif()
endforeach()
foreach(program_only command_line print terminal termination rung_programs)
  if(EXISTS "${SCRATCH}/prefix/include/rung/${program_only}.h")
    message(FATAL_ERROR "the install holds rung/${program_only}.h, a helper of the command line's alone")
  endif()
endforeach()
message("the tools component's ${tool_header_count} headers each compile alone from the prefix")

# The engine component alone: the stable headers and what an application runs, nothing more.
set(engine_prefix "${SCRATCH}/engine-prefix")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${engine_prefix}" --component engine
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install --component engine failed: ${rc}")
endif()
file(GLOB_RECURSE engine_headers RELATIVE "${engine_prefix}/include" "${engine_prefix}/include/*")
list(SORT engine_headers)
if(NOT engine_headers STREQUAL "rung/engine.h;rung/rung.h;rung/status.h")
  message(FATAL_ERROR "the engine component installs the headers '${engine_headers}'; the stable ones are rung/engine.h, rung/rung.h and rung/status.h")
endif()
foreach(absent bin lib/librung.a lib/librung_engine_core.a)
  file(GLOB found "${engine_prefix}/${absent}" "${engine_prefix}/lib*/${absent}")
  if(found)
    message(FATAL_ERROR "the engine component installs ${found}, which belongs to another component")
  endif()
endforeach()
file(GLOB engine_tools_export "${engine_prefix}/lib*/cmake/rung/rungToolsTargets.cmake")
if(engine_tools_export)
  message(FATAL_ERROR "the engine component installs the tools' CMake targets")
endif()
file(GLOB engine_only_worker "${engine_prefix}/libexec/rung/rung-probe-worker")
file(GLOB engine_only_runtime LIST_DIRECTORIES true "${engine_prefix}/share/rung/runtimes/onnxruntime-*")
if(NOT engine_only_worker OR NOT engine_only_runtime)
  message(FATAL_ERROR "the engine component lacks its worker or its ONNX Runtime build: an application could not run it")
endif()
set(consumer_prefix "${engine_prefix}")
consumer(engine-only "${ENGINE_CONSUMER_SOURCE}"
  ${without_tool_packages})
execute_process(COMMAND "${SCRATCH}/engine-only/engine_consumer" "${engine_only_runtime}" "${MODEL}" "${engine_only_worker}" "${SCRATCH}/engine-only-cache"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc OR NOT out MATCHES "classifier ran on cpu")
  message(FATAL_ERROR "the C++ consumer built against the engine component alone failed: ${out}${err}")
endif()
consumer(c-engine-only "${C_EXAMPLE_SOURCE}"
  ${without_tool_packages} -DCMAKE_DISABLE_FIND_PACKAGE_SQLite3=ON -DCMAKE_DISABLE_FIND_PACKAGE_PostgreSQL=ON)
execute_process(COMMAND "${SCRATCH}/c-engine-only/classify" "${MODEL}" "${C_INPUT}" "${SCRATCH}/c-engine-only-cache"
                        "runtime_dir=${engine_only_runtime}" runtime_default_locations=false "worker=${engine_only_worker}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "the C example built against the engine component alone failed: ${out}${err}")
endif()
# Asking that prefix for the tools fails, and says why.
file(WRITE "${SCRATCH}/wants-tools/CMakeLists.txt" "cmake_minimum_required(VERSION 3.25)\nproject(wants_tools LANGUAGES CXX)\nfind_package(rung 0.1 REQUIRED COMPONENTS tools)\n")
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SCRATCH}/wants-tools" -B "${SCRATCH}/wants-tools/build" "-DCMAKE_PREFIX_PATH=${engine_prefix}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc OR NOT err MATCHES "tools component is not installed")
  message(FATAL_ERROR "find_package(rung COMPONENTS tools) against the engine component alone: rc ${rc}, ${out}${err}")
endif()
message("the engine component alone: the stable headers, and the C and C++ programs built and run against it")
