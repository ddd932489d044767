# TFLite. runtime=c: TfLite's C API from PyPI litert-lm-api's library with the C headers of Maven's
# tensorflow-lite AAR, both in third_party/tflite-c (scripts/setup: install_tflite_c), opened with
# dlopen at run time. runtime=python: LiteRT's Python API (ai-edge-litert in .venv) in an embedded
# CPython, built where the venv has it.
infermark_declare_backend(tflite
  ORDER 50
  FRAMEWORK "TFLite (LiteRT)"
  DESCRIPTION "TFLite's interpreter through its C API (or LiteRT's Python API with runtime=python)"
  FORMATS tflite:.tflite)

set(INFERMARK_TFLITE_C_DIR "${CMAKE_SOURCE_DIR}/third_party/tflite-c")
set(INFERMARK_TFLITE_C_LIBRARY "${INFERMARK_TFLITE_C_DIR}/lib/liblitert-lm.so")
set(tflite_found FALSE)
if(NOT INFERMARK_WITH_TFLITE STREQUAL "OFF" AND EXISTS "${INFERMARK_TFLITE_C_LIBRARY}"
   AND EXISTS "${INFERMARK_TFLITE_C_DIR}/include/tensorflow/lite/c/c_api.h")
  set(tflite_found TRUE)
endif()
set(tflite_python_found FALSE)
if(tflite_found AND EXISTS "${INFERMARK_VENV}/bin/python")
  execute_process(COMMAND "${INFERMARK_VENV}/bin/python" -c "import ai_edge_litert.interpreter"
                  RESULT_VARIABLE litert_rc OUTPUT_QUIET ERROR_QUIET)
  if(litert_rc EQUAL 0)
    set(Python3_EXECUTABLE "${INFERMARK_VENV}/bin/python")
    find_package(Python3 QUIET COMPONENTS Interpreter Development.Embed)
    set(tflite_python_found ${Python3_Development.Embed_FOUND})
  endif()
endif()
infermark_backend_decide(tflite ${tflite_found} build_tflite)
if(build_tflite)
  set(tflite_dir "${CMAKE_CURRENT_LIST_DIR}")
  set(tflite_sources "${tflite_dir}/tflite_backend.cpp" "${tflite_dir}/tflite_settings.cpp"
                     "${tflite_dir}/tflite_c_api.cpp" "${tflite_dir}/tflite_c_session.cpp"
                     "${tflite_dir}/litert_c_api.cpp" "${tflite_dir}/litert_session.cpp")
  set(tflite_libraries ${CMAKE_DL_LIBS})
  if(tflite_python_found)
    list(APPEND tflite_sources "${tflite_dir}/tflite_python_session.cpp" "${tflite_dir}/embedded_python.cpp")
    list(APPEND tflite_libraries Python3::Python)
  endif()
  infermark_add_backend(tflite SOURCES ${tflite_sources} LIBRARIES ${tflite_libraries}
                        SYSTEM_INCLUDES "${INFERMARK_TFLITE_C_DIR}/include")
  target_compile_definitions(infermark_backend_tflite PRIVATE INFERMARK_TFLITE_C_LIBRARY="${INFERMARK_TFLITE_C_LIBRARY}")
  # runtime=litert: LiteRT's C API in ai-edge-litert's own library, where the venv has it.
  file(GLOB litert_library "${INFERMARK_VENV}/lib/python3*/site-packages/ai_edge_litert/libLiteRt.so")
  if(litert_library)
    list(GET litert_library 0 litert_library)
    target_compile_definitions(infermark_backend_tflite PRIVATE INFERMARK_LITERT_LIBRARY="${litert_library}")
  endif()
  if(tflite_python_found)
    target_compile_definitions(infermark_backend_tflite PRIVATE INFERMARK_TFLITE_PYTHON="${INFERMARK_VENV}/bin/python")
  endif()
endif()
