# Backends: one folder per framework, src/backends/<name>/. Its backend.cmake declares the backend
# (infermark_declare_backend: name, framework, formats and their file extensions), finds the
# framework and builds the plugin (infermark_add_backend). This file holds only the shared
# functions: it includes every folder's fragment, and writes the table of all declared backends,
# built or not, into infermark_backends (declared_backends(), src/backends/declared.hpp; the table's
# functions are in cmake/BackendTable.cmake). Nothing else lists frameworks.

include("${CMAKE_CURRENT_LIST_DIR}/BackendTable.cmake")

# Decides whether to build backend `name` given whether its framework was `found`.
function(infermark_backend_decide name found out_var)
  string(TOUPPER "${name}" upper)
  set(mode "${INFERMARK_WITH_${upper}}")
  if(mode STREQUAL "OFF")
    set(${out_var} FALSE PARENT_SCOPE)
    message(STATUS "infermark backend ${name}: off")
  elseif(found)
    set(${out_var} TRUE PARENT_SCOPE)
    message(STATUS "infermark backend ${name}: building")
  elseif(mode STREQUAL "ON")
    message(FATAL_ERROR "INFERMARK_WITH_${upper}=ON but its framework was not found (run scripts/setup)")
  else()
    set(${out_var} FALSE PARENT_SCOPE)
    message(STATUS "infermark backend ${name}: framework not found, skipped")
  endif()
endfunction()

# Builds the plugin libinfermark_backend_<name>.so, a MODULE linked to infermark_backends, from the
# SOURCES given or else every .cpp of the calling fragment's folder. Framework headers given as
# SYSTEM_INCLUDES are included as system headers, so their warnings do not break -Werror.
function(infermark_add_backend name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES;SYSTEM_INCLUDES" ${ARGN})
  if(NOT ARG_SOURCES)
    file(GLOB ARG_SOURCES CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/*.cpp")
  endif()
  set(target infermark_backend_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_compile_options(${target} PRIVATE ${INFERMARK_WARNINGS})
  target_include_directories(${target} SYSTEM PRIVATE ${ARG_SYSTEM_INCLUDES})
  target_link_libraries(${target} PRIVATE infermark_backends ${ARG_LIBRARIES})
  set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${INFERMARK_BACKEND_OUTPUT_DIR}" PREFIX "lib")
  add_dependencies(${INFERMARK_BACKEND_BUILT_WITH} ${target})
endfunction()

# Includes <root>/*/backend.cmake in name order (each declares its backend and may build it).
# Plugins go to PLUGIN_DIR and are built before target BUILT_WITH. A macro, so that what a
# framework's CMake package sets (flags, variables) lands in the directory's scope as before.
macro(infermark_include_backend_folders root)
  cmake_parse_arguments(INFERMARK_FOLDERS "" "PLUGIN_DIR;BUILT_WITH" "" ${ARGN})
  set(INFERMARK_BACKEND_OUTPUT_DIR "${INFERMARK_FOLDERS_PLUGIN_DIR}")
  set(INFERMARK_BACKEND_BUILT_WITH "${INFERMARK_FOLDERS_BUILT_WITH}")
  file(GLOB infermark_backend_fragments CONFIGURE_DEPENDS "${root}/*/backend.cmake")
  list(SORT infermark_backend_fragments)
  foreach(infermark_fragment IN LISTS infermark_backend_fragments)
    include("${infermark_fragment}")
  endforeach()
endmacro()

# The backends this build must have: every declared one but the named opt-outs, those configured
# with INFERMARK_WITH_<NAME>=OFF (as the debug and tsan presets do). AUTO builds a backend only
# when its framework is found, so one whose set-up failed would quietly have no plugin and all its
# tests would skip; the test every_declared_backend_built (cmake/CheckBackendsBuilt.cmake) fails
# instead. Sets <expected_var> and <opted_out_var> in the caller's scope.
function(infermark_expected_backends expected_var opted_out_var)
  get_property(declared GLOBAL PROPERTY INFERMARK_DECLARED_BACKENDS)
  set(expected "")
  set(opted_out "")
  set(missing "")
  foreach(name IN LISTS declared)
    string(TOUPPER "${name}" upper)
    if(INFERMARK_WITH_${upper} STREQUAL "OFF")
      list(APPEND opted_out "${name}")
    else()
      list(APPEND expected "${name}")
      if(NOT TARGET infermark_backend_${name})
        list(APPEND missing "${name}")
      endif()
    endif()
  endforeach()
  if(missing)
    list(JOIN missing ", " missing_text)
    message(WARNING "infermark: declared backends not built: ${missing_text} (framework not found: run scripts/setup, "
                    "or opt out with INFERMARK_WITH_<NAME>=OFF); the test every_declared_backend_built will fail")
  endif()
  set(${expected_var} "${expected}" PARENT_SCOPE)
  set(${opted_out_var} "${opted_out}" PARENT_SCOPE)
endfunction()

infermark_include_backend_folders("${CMAKE_SOURCE_DIR}/src/backends" PLUGIN_DIR "${INFERMARK_PLUGIN_DIR}" BUILT_WITH infermark)
# Before tests/ declares its fixture backends into the same list.
infermark_expected_backends(INFERMARK_BACKENDS_EXPECTED INFERMARK_BACKENDS_OPTED_OUT)
infermark_write_backend_table(OUTPUT "${CMAKE_BINARY_DIR}/generated/declared_backends.cpp" FUNCTION declared_backends)
target_sources(infermark_backends PRIVATE "${CMAKE_BINARY_DIR}/generated/declared_backends.cpp")
