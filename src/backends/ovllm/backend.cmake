# OpenVINO running a stateful LLM IR (optimum-intel's export, the form OpenVINO GenAI runs) on the
# OpenVINO C++ runtime of the openvino wheel in .venv, with the tokenizer and detokenizer IRs of
# openvino-tokenizers (its extension library, from the openvino-tokenizers wheel in .venv).
infermark_declare_backend(ovllm
  ORDER 66
  FRAMEWORK "OpenVINO"
  DESCRIPTION "OpenVINO generating text from a stateful LLM IR folder (*.ov, optimum-intel's export) on CPU"
  FORMATS openvino-llm:.ov)

set(ovllm_found FALSE)
if(NOT INFERMARK_WITH_OVLLM STREQUAL "OFF" AND EXISTS "${INFERMARK_VENV}/bin/python")
  if(NOT TARGET openvino::runtime)
    execute_process(
      COMMAND "${INFERMARK_VENV}/bin/python" -c "from openvino.utils import get_cmake_path; print(get_cmake_path())"
      OUTPUT_VARIABLE ovllm_cmake_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE ovllm_rc)
    if(ovllm_rc EQUAL 0 AND EXISTS "${ovllm_cmake_dir}/OpenVINOConfig.cmake")
      find_package(OpenVINO QUIET COMPONENTS Runtime PATHS "${ovllm_cmake_dir}" NO_DEFAULT_PATH)
    endif()
  endif()
  execute_process(
    COMMAND "${INFERMARK_VENV}/bin/python" -c
            "import openvino_tokenizers, pathlib; print(pathlib.Path(openvino_tokenizers.__file__).parent / 'lib' / 'libopenvino_tokenizers.so')"
    OUTPUT_VARIABLE ovllm_tokenizers_library OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE ovllm_tokenizers_rc)
  if(TARGET openvino::runtime AND ovllm_tokenizers_rc EQUAL 0 AND EXISTS "${ovllm_tokenizers_library}")
    set(ovllm_found TRUE)
  endif()
endif()
infermark_backend_decide(ovllm ${ovllm_found} build_ovllm)
if(build_ovllm)
  infermark_add_backend(ovllm LIBRARIES openvino::runtime)
  target_compile_definitions(infermark_backend_ovllm PRIVATE INFERMARK_OV_TOKENIZERS_LIBRARY="${ovllm_tokenizers_library}")
endif()
