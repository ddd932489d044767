# ONNX Runtime GenAI: PyPI onnxruntime-genai's library and the ONNX Runtime library of PyPI
# onnxruntime that it requires, in third_party/onnxruntime-genai (scripts/setup: install_ortgenai),
# opened with dlopen at run time through the C API declared in oga_0_18_declarations.hpp.
infermark_declare_backend(ortgenai
  ORDER 65
  FRAMEWORK "ONNX Runtime GenAI"
  DESCRIPTION "ONNX Runtime GenAI generating text from its model builder's folders (*.genai) on CPU"
  FORMATS onnx-genai:.genai)

set(INFERMARK_ORTGENAI_DIR "${CMAKE_SOURCE_DIR}/third_party/onnxruntime-genai")
set(ortgenai_found FALSE)
if(EXISTS "${INFERMARK_ORTGENAI_DIR}/lib/libonnxruntime-genai.so" AND EXISTS "${INFERMARK_ORTGENAI_DIR}/VERSION")
  set(ortgenai_found TRUE)
endif()
infermark_backend_decide(ortgenai ${ortgenai_found} build_ortgenai)
if(build_ortgenai)
  infermark_add_backend(ortgenai LIBRARIES ${CMAKE_DL_LIBS})
  # The version the declarations were checked against; the backend refuses an install of another.
  target_compile_definitions(infermark_backend_ortgenai PRIVATE INFERMARK_ORTGENAI_DIR="${INFERMARK_ORTGENAI_DIR}"
                                                                INFERMARK_ORTGENAI_VERSION="0.18.0")
endif()
