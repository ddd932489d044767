# MNN: built from the source the crates.io crate mnn-sys vendors into third_party/mnn/install
# (scripts/setup: install_mnn): one libMNN.so and its headers.
infermark_declare_backend(mnn
  ORDER 56
  FRAMEWORK "MNN"
  DESCRIPTION "Alibaba MNN's CPU backend running models its converter wrote (*.mnn)"
  FORMATS mnn:.mnn)

set(INFERMARK_MNN_DIR "${CMAKE_SOURCE_DIR}/third_party/mnn/install")
set(mnn_found FALSE)
if(NOT INFERMARK_WITH_MNN STREQUAL "OFF" AND EXISTS "${INFERMARK_MNN_DIR}/lib/libMNN.so"
   AND EXISTS "${INFERMARK_MNN_DIR}/include/MNN/Interpreter.hpp")
  set(mnn_found TRUE)
endif()
infermark_backend_decide(mnn ${mnn_found} build_mnn)
if(build_mnn)
  infermark_add_backend(mnn LIBRARIES "${INFERMARK_MNN_DIR}/lib/libMNN.so" SYSTEM_INCLUDES "${INFERMARK_MNN_DIR}/include")
  set_target_properties(infermark_backend_mnn PROPERTIES BUILD_RPATH "${INFERMARK_MNN_DIR}/lib")
endif()
