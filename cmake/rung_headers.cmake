# Where rung's headers live. Every one is included as "rung/<name>.h":
#   include/rung/                  the stable API: rung.h (the C ABI), engine.h (the
#                                  header-only C++ layer over it) and status.h, which
#                                  engine.h includes. The `engine` install component.
#   src/<concept>/include/rung/    a concept's C++ headers, for rung's tools and for
#                                  whoever links rung::rung: the `tools` install
#                                  component, not stable. The folder is the owner.
#   src/<concept>/program/rung/    what only rung's own programs use (the CLI's
#                                  process helpers): never installed.
# The build compiles against views made of links (one per layer, src/CMakeLists.txt,
# and one of everything for the programs, tests and benches).

# The headers `concept` owns, public and program-only, under the source tree `root`.
function(rung_concept_headers root concept out)
  file(GLOB headers CONFIGURE_DEPENDS "${root}/src/${concept}/include/rung/*.h" "${root}/src/${concept}/program/rung/*.h")
  set(${out} ${headers} PARENT_SCOPE)
endfunction()

# Every header of the tree at `root`, each named once (two headers of one name stop the configure).
function(rung_all_headers root out)
  file(GLOB headers CONFIGURE_DEPENDS "${root}/include/rung/*.h" "${root}/src/*/include/rung/*.h" "${root}/src/*/program/rung/*.h")
  set(seen "")
  foreach(header IN LISTS headers)
    get_filename_component(name "${header}" NAME)
    if(name IN_LIST seen)
      message(FATAL_ERROR "two headers are named rung/${name}; one of them is ${header}")
    endif()
    list(APPEND seen "${name}")
  endforeach()
  set(${out} ${headers} PARENT_SCOPE)
endfunction()

# `dir`/rung/<name>.h, a link to every header of the tree at `root`: the include
# root of what sees all of rung (its programs, tests, benches and fuzzers).
function(rung_header_view root dir)
  rung_all_headers("${root}" headers)
  file(REMOVE_RECURSE "${dir}/rung")
  file(MAKE_DIRECTORY "${dir}/rung")
  foreach(header IN LISTS headers)
    get_filename_component(name "${header}" NAME)
    file(CREATE_LINK "${header}" "${dir}/rung/${name}" SYMBOLIC)
  endforeach()
endfunction()
