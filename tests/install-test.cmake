# Script for the install test: install, then configure, build and run clean
# consumer projects against the install tree with find_package.
#   the tools consumer links rung::rung;
#   the engine consumer links rung::engine alone, configured with the tools'
#   dependencies hidden from find_package, and the exported engine target must
#   name none of them.
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

function(consumer name source)
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${source}" -B "${SCRATCH}/${name}" "-DCMAKE_PREFIX_PATH=${SCRATCH}/prefix" ${ARGN}
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
  -DCMAKE_DISABLE_FIND_PACKAGE_fmt=ON -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_OpenSSL=ON -DCMAKE_DISABLE_FIND_PACKAGE_Protobuf=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_ONNX=ON)
file(GLOB worker "${SCRATCH}/prefix/libexec/rung/rung-probe-worker")
execute_process(COMMAND "${SCRATCH}/engine/engine_consumer" "${RUNTIMES}/onnxruntime-1.30.0" "${MODEL}" "${worker}" "${SCRATCH}/engine-cache"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(rc)
  message(FATAL_ERROR "engine consumer failed: ${err}")
endif()
