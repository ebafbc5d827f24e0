# Run by `cmake --install` (cmake/kit.cmake): writes the installed Python package's
# _kit.py, naming the kit's lib/ and bin/ as installed, and builds a wheel of it
# (share/rung/python/rung-<version>-py3-none-any.whl) for `pip install` into a venv.
# The prefix is the one given at install time; DESTDIR stages it without changing it.
set(_prefix "${CMAKE_INSTALL_PREFIX}")
set(_python_dir "$ENV{DESTDIR}${_prefix}/${RUNG_KIT_DATADIR}/rung/python")
file(WRITE "${_python_dir}/rung/_kit.py"
"\"\"\"Written by rung's `cmake --install`: the kit this package came from. The package
looks for librung_engine.so.1 and the rung command there when it was copied away
from the kit (pip into a venv, --target); a kit moved since is not followed.\"\"\"
LIB_DIR = \"${_prefix}/${RUNG_KIT_LIBDIR}\"
BIN_DIR = \"${_prefix}/${RUNG_KIT_BINDIR}\"
")
find_program(_python NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
execute_process(COMMAND "${_python}" -c "import setuptools, wheel" RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
execute_process(COMMAND "${_python}" -m pip --version RESULT_VARIABLE _pip_rc OUTPUT_QUIET ERROR_QUIET)
if(_rc OR _pip_rc OR NOT _python)
  message(WARNING "rung's Python wheel is not built: /usr/bin/python3 lacks pip, wheel or setuptools "
                  "(apt install python3-pip python3-wheel python3-setuptools); the package is in ${_python_dir}")
  return()
endif()
# Built from a scratch copy, so nothing is written into the kit but the wheel; one of
# its own per install, since two installs from one build tree may run at once (ctest).
string(RANDOM LENGTH 12 _tag)
set(_scratch "${RUNG_KIT_SCRATCH}-${_tag}")
file(REMOVE_RECURSE "${_scratch}")
file(MAKE_DIRECTORY "${_scratch}")
file(COPY "${_python_dir}/rung" "${_python_dir}/pyproject.toml" "${_python_dir}/README.md" DESTINATION "${_scratch}")
file(GLOB _old_wheels "${_python_dir}/rung-*.whl")
if(_old_wheels)
  file(REMOVE ${_old_wheels})
endif()
execute_process(COMMAND "${_python}" -m pip wheel --quiet --no-deps --no-index --no-build-isolation
                        --wheel-dir "${_python_dir}" "${_scratch}"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
file(REMOVE_RECURSE "${_scratch}")
if(_rc)
  message(FATAL_ERROR "building rung's Python wheel failed:\n${_out}${_err}")
endif()
file(GLOB _wheel RELATIVE "${_python_dir}" "${_python_dir}/rung-*.whl")
message(STATUS "Installing: ${_python_dir}/${_wheel}")
