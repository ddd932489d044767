# TFLite: LiteRT's interpreter from the PyPI wheel ai-edge-litert in .venv (scripts/setup: install_tflite).
# No registry package ships a TFLite C/C++ library with matching headers, so the backend drives the
# wheel's Python API from an embedded CPython: the venv's interpreter (Debian's python3.11).
infermark_declare_backend(tflite
  ORDER 50
  FRAMEWORK "TFLite (LiteRT)"
  DESCRIPTION "LiteRT's TFLite interpreter through its Python API in an embedded CPython"
  FORMATS tflite:.tflite)

set(tflite_found FALSE)
if(NOT INFERMARK_WITH_TFLITE STREQUAL "OFF" AND EXISTS "${INFERMARK_VENV}/bin/python")
  execute_process(COMMAND "${INFERMARK_VENV}/bin/python" -c "import ai_edge_litert.interpreter"
                  RESULT_VARIABLE litert_rc OUTPUT_QUIET ERROR_QUIET)
  if(litert_rc EQUAL 0)
    set(Python3_EXECUTABLE "${INFERMARK_VENV}/bin/python")
    find_package(Python3 QUIET COMPONENTS Interpreter Development.Embed)
    set(tflite_found ${Python3_Development.Embed_FOUND})
  endif()
endif()
infermark_backend_decide(tflite ${tflite_found} build_tflite)
if(build_tflite)
  infermark_add_backend(tflite LIBRARIES Python3::Python ${CMAKE_DL_LIBS})
  target_compile_definitions(infermark_backend_tflite PRIVATE INFERMARK_TFLITE_PYTHON="${INFERMARK_VENV}/bin/python")
endif()
