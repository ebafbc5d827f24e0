# What each program loads at exec is what every launch pays for (docs/performance.md,
# a warm launch): libraries only some commands need are loaded when they are used.
# -DCHECKS="file=regex::file=regex..." : readelf -d of each file must name no DT_NEEDED matching its regex.
# The regexes hold no brackets: a CMake list does not split inside [ ].
string(REPLACE "::" ";" checks "${CHECKS}")
foreach(check IN LISTS checks)
  string(FIND "${check}" "=" eq)
  string(SUBSTRING "${check}" 0 ${eq} file)
  math(EXPR from "${eq} + 1")
  string(SUBSTRING "${check}" ${from} -1 forbidden)
  execute_process(COMMAND readelf -d ${file} OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readelf failed on '${file}'")
  endif()
  string(REGEX MATCHALL "Shared library: \\[[^]]*\\]" needed "${dynamic}")
  list(LENGTH needed count)
  foreach(n IN LISTS needed)
    if(n MATCHES "\\[(${forbidden})\\]")
      message(FATAL_ERROR "${file} links ${CMAKE_MATCH_1} at exec; it must be loaded when used (os/system_library.h)")
    endif()
  endforeach()
  get_filename_component(name "${file}" NAME)
  message(STATUS "${name}: ${count} libraries at exec, none matching ${forbidden}")
endforeach()
