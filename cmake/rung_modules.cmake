# A rung is one module: every src/rungs/*.cpp that defines `RungModule
# rung_module_<id>()` is listed here, for src/rungs/modules.cpp to register.
# Nothing else names the rungs, so a new execution provider is one file there.
# Used by every build description (src/CMakeLists.txt for every system, and fuzz/).
#
# rung_module_list(OUT_DIR) writes OUT_DIR/rung_module_list.inc, one
# RUNG_MODULE_ENTRY(id) per module, and re-runs the configure when a file is added.
function(rung_module_list out_dir)
  file(GLOB sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../src/rungs/*.cpp")
  set(entries "")
  foreach(file IN LISTS sources)
    file(STRINGS "${file}" defs REGEX "^RungModule rung_module_[a-z0-9_]+\\(\\) {$")
    foreach(def IN LISTS defs)
      string(REGEX REPLACE "^RungModule rung_module_([a-z0-9_]+)\\(\\) {$" "\\1" id "${def}")
      string(APPEND entries "RUNG_MODULE_ENTRY(${id})\n")
    endforeach()
  endforeach()
  if(entries STREQUAL "")
    message(FATAL_ERROR "src/rungs/ defines no rung module")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${sources})  # a module renamed inside its file
  file(CONFIGURE OUTPUT "${out_dir}/rung_module_list.inc" CONTENT "${entries}" @ONLY)
endfunction()
