# The table of declared backends: infermark_declare_backend() records a backend folder's
# declaration, infermark_write_backend_table() writes every declaration as the C++ table
# declared_backends() (src/backends/declared.hpp). A file of its own, apart from the folders'
# framework searches and plugin builds (cmake/Backends.cmake), so that a project that builds no
# plugin (tests/fuzz) writes the same table.

# One option per backend: INFERMARK_WITH_<NAME>=AUTO|ON|OFF. AUTO builds the backend when its
# framework is found; ON makes a missing framework a configure error; OFF skips it.

function(infermark_backend_option name)
  string(TOUPPER "${name}" upper)
  set(INFERMARK_WITH_${upper} AUTO CACHE STRING "Build the ${name} backend: AUTO, ON or OFF")
  set_property(CACHE INFERMARK_WITH_${upper} PROPERTY STRINGS AUTO ON OFF)
endfunction()

# infermark_declare_backend(<name> ORDER <n> FRAMEWORK <human name> DESCRIPTION <one line>
#                           FORMATS <format>:<.ext>[,<.ext>...] ...)
# <name> is the folder's name. ORDER places it among the others (lower first: the order
# comparisons run and list backends). Each format names the file extensions that mean it; folders
# that read the same format may each name its extensions, but an extension means one format only.
function(infermark_declare_backend name)
  cmake_parse_arguments(ARG "" "ORDER;FRAMEWORK;DESCRIPTION" "FORMATS" ${ARGN})
  set(where "${CMAKE_CURRENT_LIST_FILE}")
  get_filename_component(folder_name "${CMAKE_CURRENT_LIST_DIR}" NAME)
  if(NOT name MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "${where}: backend name '${name}' must be lower-case letters, digits and _")
  endif()
  if(NOT name STREQUAL folder_name)
    message(FATAL_ERROR "${where}: backend '${name}' must be declared in a folder of its name, not '${folder_name}'")
  endif()
  if(NOT ARG_ORDER MATCHES "^[0-9]+$" OR ARG_FRAMEWORK STREQUAL "" OR ARG_DESCRIPTION STREQUAL "" OR NOT ARG_FORMATS)
    message(FATAL_ERROR "${where}: infermark_declare_backend(${name}) needs ORDER (a number), FRAMEWORK, DESCRIPTION and FORMATS")
  endif()
  get_property(declared GLOBAL PROPERTY INFERMARK_DECLARED_BACKENDS)
  if(name IN_LIST declared)
    get_property(first GLOBAL PROPERTY INFERMARK_BACKEND_${name}_FOLDER)
    message(FATAL_ERROR "${where}: backend '${name}' is already declared in ${first}")
  endif()

  set(formats "")
  foreach(entry IN LISTS ARG_FORMATS)
    if(NOT entry MATCHES "^([a-z][a-z0-9-]*):(\\.[A-Za-z0-9_.]+(,\\.[A-Za-z0-9_.]+)*)$")
      message(FATAL_ERROR "${where}: format '${entry}' must be <format>:<.ext>[,<.ext>...], e.g. onnx:.onnx")
    endif()
    set(format "${CMAKE_MATCH_1}")
    string(REPLACE "," ";" extensions "${CMAKE_MATCH_2}")
    list(APPEND formats "${format}")
    get_property(known_formats GLOBAL PROPERTY INFERMARK_DECLARED_FORMATS)
    if(NOT format IN_LIST known_formats)
      set_property(GLOBAL APPEND PROPERTY INFERMARK_DECLARED_FORMATS "${format}")
    endif()
    foreach(ext IN LISTS extensions)
      get_property(owner GLOBAL PROPERTY INFERMARK_EXTENSION_${ext}_FORMAT)
      if(owner AND NOT owner STREQUAL format)
        get_property(by GLOBAL PROPERTY INFERMARK_EXTENSION_${ext}_DECLARED_BY)
        message(FATAL_ERROR "${where}: extension ${ext} cannot mean '${format}': ${by} declared it as '${owner}'")
      endif()
      if(NOT owner)
        set_property(GLOBAL PROPERTY INFERMARK_EXTENSION_${ext}_FORMAT "${format}")
        set_property(GLOBAL PROPERTY INFERMARK_EXTENSION_${ext}_DECLARED_BY "${where}")
        set_property(GLOBAL APPEND PROPERTY INFERMARK_FORMAT_${format}_EXTENSIONS "${ext}")
      endif()
    endforeach()
  endforeach()

  file(RELATIVE_PATH folder "${CMAKE_SOURCE_DIR}" "${CMAKE_CURRENT_LIST_DIR}")
  set_property(GLOBAL APPEND PROPERTY INFERMARK_DECLARED_BACKENDS "${name}")
  set_property(GLOBAL PROPERTY INFERMARK_BACKEND_${name}_ORDER "${ARG_ORDER}")
  set_property(GLOBAL PROPERTY INFERMARK_BACKEND_${name}_FRAMEWORK "${ARG_FRAMEWORK}")
  set_property(GLOBAL PROPERTY INFERMARK_BACKEND_${name}_DESCRIPTION "${ARG_DESCRIPTION}")
  set_property(GLOBAL PROPERTY INFERMARK_BACKEND_${name}_FORMATS "${formats}")
  set_property(GLOBAL PROPERTY INFERMARK_BACKEND_${name}_FOLDER "${folder}")
  infermark_backend_option(${name})
endfunction()

function(infermark_cxx_string out value)
  string(REPLACE "\\" "\\\\" value "${value}")
  string(REPLACE "\"" "\\\"" value "${value}")
  set(${out} "\"${value}\"" PARENT_SCOPE)
endfunction()

# Writes OUTPUT, a C++ source defining `const BackendTable& infermark::<FUNCTION>()` with every
# backend declared so far, sorted by ORDER (then name), and every format they read.
function(infermark_write_backend_table)
  cmake_parse_arguments(ARG "" "OUTPUT;FUNCTION" "" ${ARGN})
  get_property(declared GLOBAL PROPERTY INFERMARK_DECLARED_BACKENDS)
  set(keyed "")
  foreach(name IN LISTS declared)
    get_property(order GLOBAL PROPERTY INFERMARK_BACKEND_${name}_ORDER)
    list(APPEND keyed "${order}:${name}")
  endforeach()
  list(SORT keyed COMPARE NATURAL)

  set(arrays "")
  set(format_rows "")
  set(backend_rows "")
  # Formats in the order the backends, in preference order, first name them.
  set(formats "")
  foreach(key IN LISTS keyed)
    string(REGEX REPLACE "^[0-9]+:" "" name "${key}")
    get_property(backend_formats GLOBAL PROPERTY INFERMARK_BACKEND_${name}_FORMATS)
    foreach(format IN LISTS backend_formats)
      if(NOT format IN_LIST formats)
        list(APPEND formats "${format}")
      endif()
    endforeach()
  endforeach()
  set(index 0)
  foreach(format IN LISTS formats)
    get_property(extensions GLOBAL PROPERTY INFERMARK_FORMAT_${format}_EXTENSIONS)
    list(JOIN extensions "\", \"" joined)
    string(APPEND arrays "constexpr std::string_view kFormat${index}Extensions[] = {\"${joined}\"};\n")
    string(APPEND format_rows "    {\"${format}\", kFormat${index}Extensions},\n")
    math(EXPR index "${index} + 1")
  endforeach()
  set(index 0)
  foreach(key IN LISTS keyed)
    string(REGEX REPLACE "^[0-9]+:" "" name "${key}")
    foreach(field FRAMEWORK DESCRIPTION FORMATS FOLDER)
      get_property(${field} GLOBAL PROPERTY INFERMARK_BACKEND_${name}_${field})
    endforeach()
    infermark_cxx_string(framework "${FRAMEWORK}")
    infermark_cxx_string(description "${DESCRIPTION}")
    list(JOIN FORMATS "\", \"" joined)
    string(APPEND arrays "constexpr std::string_view kBackend${index}Formats[] = {\"${joined}\"};\n")
    string(APPEND backend_rows "    {\"${name}\", ${framework}, ${description}, kBackend${index}Formats, \"${FOLDER}\"},\n")
    math(EXPR index "${index} + 1")
  endforeach()

  file(CONFIGURE OUTPUT "${ARG_OUTPUT}" @ONLY CONTENT [=[
// Generated by cmake/Backends.cmake from the backend.cmake files of the backend folders; do not edit.
#include "backends/declared.hpp"

namespace infermark {
namespace {

@arrays@
constexpr ModelFormatDeclaration kFormats[] = {
@format_rows@};

constexpr BackendDeclaration kBackends[] = {
@backend_rows@};

}  // namespace

const BackendTable& @ARG_FUNCTION@();

const BackendTable& @ARG_FUNCTION@() {
  static constexpr BackendTable table{kBackends, kFormats};
  return table;
}

}  // namespace infermark
]=])
endfunction()
