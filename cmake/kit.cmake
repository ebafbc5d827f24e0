# The application kit `cmake --install` lays out (the main command's build/kit):
#
#   lib/librung_engine.so.1        the C ABI, RUNPATH $ORIGIN
#   lib/libfmt.so.9, libprotobuf.so.32, libonnx_proto.so.1
#                                  the engine's third-party libraries, copied from
#                                  Debian (none ships a static archive built for a
#                                  shared library), so the kit runs where they are absent
#   libexec/rung/rung-probe-worker the worker, RUNPATH to the kit's lib/
#   share/rung/runtimes/<build>/   the ONNX Runtime build(s) the engine finds from
#                                  where librung_engine was loaded
#   share/rung/python/             the Python package (and its wheel), knowing its kit
#   share/rung/rust/               the Rust crates, finding the kit's library from where they lie
#   share/doc/rung/third-party/    the copyright files of what lib/ carries
#   include/rung/, lib/pkgconfig/rung-engine.pc, lib/cmake/rung/
#
# Nothing in it names the prefix it was installed under (the install test checks
# the engine and its worker): move the directory anywhere and it still finds its parts.

# The library's third-party code beside it, found there first. The build tree uses the
# same run path (a build path would be padded for the install's, with empty entries the
# loader reads as the working directory), plus a cross build's own (the aarch64 sysroot).
file(RELATIVE_PATH _rung_lib_from_libexec "${CMAKE_INSTALL_FULL_LIBEXECDIR}/rung" "${CMAKE_INSTALL_FULL_LIBDIR}")
set(_rung_engine_rpath "$ORIGIN" ${CMAKE_BUILD_RPATH})
set(_rung_worker_rpath "$ORIGIN/${_rung_lib_from_libexec}" ${CMAKE_BUILD_RPATH})
set_target_properties(rung_engine PROPERTIES INSTALL_RPATH "${_rung_engine_rpath}" BUILD_WITH_INSTALL_RPATH ON)
set_target_properties(rung_probe_worker PROPERTIES INSTALL_RPATH "${_rung_worker_rpath}" BUILD_WITH_INSTALL_RPATH ON)
install(RUNTIME_DEPENDENCY_SET rung_engine_dependencies
        PRE_INCLUDE_REGEXES "^libfmt\\.so" "^libprotobuf\\.so" "^libonnx_proto\\.so"
        PRE_EXCLUDE_REGEXES ".*"
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT engine)
foreach(_package libfmt9 libprotobuf32 libonnx1)
  if(EXISTS "/usr/share/doc/${_package}/copyright")
    install(FILES "/usr/share/doc/${_package}/copyright" DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/rung/third-party
            RENAME "${_package}.copyright" COMPONENT engine)
  endif()
endforeach()

# The ONNX Runtime builds the kit ships: by default the newest fetched one.
file(GLOB _rung_fetched LIST_DIRECTORIES true "${RUNG_DEPS_DIR}/runtimes/onnxruntime-*")
list(SORT _rung_fetched COMPARE NATURAL ORDER DESCENDING)
set(_rung_newest "")
if(_rung_fetched)
  list(GET _rung_fetched 0 _rung_newest)
endif()
set(RUNG_KIT_RUNTIMES "${_rung_newest}" CACHE STRING
    "ONNX Runtime builds (directories holding libonnxruntime.so*) the kit ships in share/rung/runtimes")
foreach(_runtime IN LISTS RUNG_KIT_RUNTIMES)
  if(IS_DIRECTORY "${_runtime}")
    install(DIRECTORY "${_runtime}" DESTINATION ${CMAKE_INSTALL_DATADIR}/rung/runtimes
            USE_SOURCE_PERMISSIONS COMPONENT engine PATTERN ".stamp" EXCLUDE)
  endif()
endforeach()

# Python: the package with a _kit.py naming this kit's lib/ and bin/ as installed
# (pip copies a package away from its kit), and a wheel of it for a venv.
install(DIRECTORY bindings/python/rung DESTINATION ${CMAKE_INSTALL_DATADIR}/rung/python COMPONENT bindings
        PATTERN "__pycache__" EXCLUDE)
install(FILES bindings/python/pyproject.toml bindings/python/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/rung/python COMPONENT bindings)
install(CODE "set(RUNG_KIT_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
set(RUNG_KIT_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
set(RUNG_KIT_DATADIR \"${CMAKE_INSTALL_DATADIR}\")
set(RUNG_KIT_SCRATCH \"${PROJECT_BINARY_DIR}/python-kit\")" COMPONENT bindings)
install(SCRIPT cmake/install-python-kit.cmake COMPONENT bindings)

# Rust: the two crates, and where the kit's library lies from rung-sys's folder.
install(DIRECTORY bindings/rust/rung-sys bindings/rust/rung DESTINATION ${CMAKE_INSTALL_DATADIR}/rung/rust COMPONENT bindings
        PATTERN "target" EXCLUDE)
file(RELATIVE_PATH _rung_lib_from_crate "${CMAKE_INSTALL_FULL_DATADIR}/rung/rust/rung-sys" "${CMAKE_INSTALL_FULL_LIBDIR}")
file(WRITE "${PROJECT_BINARY_DIR}/kit-lib-dir" "${_rung_lib_from_crate}\n")
install(FILES "${PROJECT_BINARY_DIR}/kit-lib-dir" DESTINATION ${CMAKE_INSTALL_DATADIR}/rung/rust/rung-sys COMPONENT bindings)
