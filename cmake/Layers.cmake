# infermark_layer(<folder> [PUBLIC <folders>] [PRIVATE <folders>] [EXCLUDE <files>]
#                 [PUBLIC_THIRD_PARTY <targets>] [PRIVATE_THIRD_PARTY <targets>])
# Builds src/<folder>/*.cpp as the static library infermark_<folder>. Its include root is a folder
# of the build tree holding one link, <folder> -> src/<folder>, so "<folder>/x.hpp" resolves for
# the folder itself and for the libraries that link it, and for no one else: a header of a folder
# that is not linked (one above, or beside) is not found, and the include fails to compile.
# PUBLIC/PRIVATE name the layers below that it uses (PUBLIC where its headers include them).
set(INFERMARK_LAYERS "" CACHE INTERNAL "every layer library, bottom first")
function(infermark_layer folder)
  cmake_parse_arguments(ARG "" "" "PUBLIC;PRIVATE;EXCLUDE;PUBLIC_THIRD_PARTY;PRIVATE_THIRD_PARTY" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/src/${folder}/*.cpp")
  foreach(excluded IN LISTS ARG_EXCLUDE)
    list(FILTER sources EXCLUDE REGEX "/src/${folder}/${excluded}$")
  endforeach()
  set(target infermark_${folder})
  add_library(${target} STATIC ${sources})
  set(root "${CMAKE_BINARY_DIR}/layers/${folder}")
  file(MAKE_DIRECTORY "${root}")
  file(CREATE_LINK "${CMAKE_SOURCE_DIR}/src/${folder}" "${root}/${folder}" SYMBOLIC)
  target_include_directories(${target} PUBLIC "${root}")
  target_compile_options(${target} PRIVATE ${INFERMARK_WARNINGS})
  foreach(below IN LISTS ARG_PUBLIC)
    target_link_libraries(${target} PUBLIC infermark_${below})
  endforeach()
  foreach(below IN LISTS ARG_PRIVATE)
    target_link_libraries(${target} PRIVATE infermark_${below})
  endforeach()
  target_link_libraries(${target} PUBLIC ${ARG_PUBLIC_THIRD_PARTY} PRIVATE ${ARG_PRIVATE_THIRD_PARTY})
  set(INFERMARK_LAYERS ${INFERMARK_LAYERS} ${target} CACHE INTERNAL "every layer library, bottom first")
endfunction()
