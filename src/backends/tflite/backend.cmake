# TFLite. runtime=c: TfLite's C API from PyPI litert-lm-api's library with the C headers of Maven's
# tensorflow-lite AAR, both in third_party/tflite-c (scripts/setup: install_tflite_c), opened with
# dlopen at run time. runtime=litert: LiteRT's C API on ai-edge-litert's libLiteRt.so (in .venv).
infermark_declare_backend(tflite
  ORDER 50
  FRAMEWORK "TFLite (LiteRT)"
  DESCRIPTION "LiteRT's CompiledModel through LiteRT's C API (runtime=litert) or TfLite's interpreter through its C API (runtime=c)"
  FORMATS tflite:.tflite)

set(INFERMARK_TFLITE_C_DIR "${CMAKE_SOURCE_DIR}/third_party/tflite-c")
set(INFERMARK_TFLITE_C_LIBRARY "${INFERMARK_TFLITE_C_DIR}/lib/liblitert-lm.so")
set(tflite_found FALSE)
if(NOT INFERMARK_WITH_TFLITE STREQUAL "OFF" AND EXISTS "${INFERMARK_TFLITE_C_LIBRARY}"
   AND EXISTS "${INFERMARK_TFLITE_C_DIR}/include/tensorflow/lite/c/c_api.h")
  set(tflite_found TRUE)
endif()
infermark_backend_decide(tflite ${tflite_found} build_tflite)
if(build_tflite)
  set(tflite_dir "${CMAKE_CURRENT_LIST_DIR}")
  set(tflite_sources "${tflite_dir}/tflite_backend.cpp" "${tflite_dir}/tflite_settings.cpp"
                     "${tflite_dir}/tflite_c_api.cpp" "${tflite_dir}/tflite_c_session.cpp"
                     "${tflite_dir}/litert_c_api.cpp" "${tflite_dir}/litert_session.cpp")
  set(tflite_libraries ${CMAKE_DL_LIBS})
  infermark_add_backend(tflite SOURCES ${tflite_sources} LIBRARIES ${tflite_libraries}
                        SYSTEM_INCLUDES "${INFERMARK_TFLITE_C_DIR}/include")
  target_compile_definitions(infermark_backend_tflite PRIVATE INFERMARK_TFLITE_C_LIBRARY="${INFERMARK_TFLITE_C_LIBRARY}")
  # runtime=litert: LiteRT's C API in ai-edge-litert's own library, where the venv has it.
  file(GLOB litert_library "${INFERMARK_VENV}/lib/python3*/site-packages/ai_edge_litert/libLiteRt.so")
  if(litert_library)
    list(GET litert_library 0 litert_library)
    target_compile_definitions(infermark_backend_tflite PRIVATE INFERMARK_LITERT_LIBRARY="${litert_library}")
  endif()
endif()
