# ncnn: built from PyPI's ncnn sdist into third_party/ncnn/install (scripts/setup: install_ncnn);
# its CMake package (ncnnConfig.cmake) gives the ncnn target with its OpenMP dependency.
infermark_declare_backend(ncnn
  ORDER 55
  FRAMEWORK "ncnn"
  DESCRIPTION "Tencent ncnn (CPU, x86 ISA dispatch at run time) running pnnx-converted models"
  FORMATS ncnn:.param)

set(INFERMARK_NCNN_DIR "${CMAKE_SOURCE_DIR}/third_party/ncnn/install")
set(ncnn_found FALSE)
if(NOT INFERMARK_WITH_NCNN STREQUAL "OFF" AND EXISTS "${INFERMARK_NCNN_DIR}/lib/cmake/ncnn/ncnnConfig.cmake")
  find_package(ncnn QUIET PATHS "${INFERMARK_NCNN_DIR}" NO_DEFAULT_PATH)
  set(ncnn_found ${ncnn_FOUND})
endif()
infermark_backend_decide(ncnn ${ncnn_found} build_ncnn)
if(build_ncnn)
  infermark_add_backend(ncnn LIBRARIES ncnn SYSTEM_INCLUDES "${INFERMARK_NCNN_DIR}/include")
  set_target_properties(infermark_backend_ncnn PROPERTIES BUILD_RPATH "${INFERMARK_NCNN_DIR}/lib")
endif()
