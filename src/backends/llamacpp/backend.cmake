# llama.cpp: built from the pinned source into third_party/llama.cpp/install (scripts/setup: install_llamacpp).
infermark_declare_backend(llamacpp
  ORDER 60
  FRAMEWORK "llama.cpp"
  DESCRIPTION "llama.cpp generating text from GGUF language models on CPU"
  FORMATS gguf:.gguf)

set(LLAMACPP_ROOT "${INFERMARK_THIRD_PARTY}/llama.cpp")
set(llamacpp_found FALSE)
if(EXISTS "${LLAMACPP_ROOT}/install/lib/libllama.so" AND EXISTS "${LLAMACPP_ROOT}/install/include/llama.h")
  set(llamacpp_found TRUE)
endif()
infermark_backend_decide(llamacpp ${llamacpp_found} build_llamacpp)
if(build_llamacpp)
  file(READ "${LLAMACPP_ROOT}/VERSION" llamacpp_version)
  file(READ "${LLAMACPP_ROOT}/SOURCE" llamacpp_source)
  string(STRIP "${llamacpp_version}" llamacpp_version)
  string(STRIP "${llamacpp_source}" llamacpp_source)
  infermark_add_backend(llamacpp
    SYSTEM_INCLUDES "${LLAMACPP_ROOT}/install/include"
    LIBRARIES "${LLAMACPP_ROOT}/install/lib/libllama.so")
  target_compile_definitions(infermark_backend_llamacpp PRIVATE
    INFERMARK_LLAMACPP_VERSION="${llamacpp_version}" INFERMARK_LLAMACPP_SOURCE="${llamacpp_source}")
  set_target_properties(infermark_backend_llamacpp PROPERTIES BUILD_RPATH "${LLAMACPP_ROOT}/install/lib")
endif()
