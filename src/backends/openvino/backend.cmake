# OpenVINO: the C++ package inside the PyPI wheel in .venv (scripts/setup: install_python_venv).
infermark_declare_backend(openvino
  ORDER 20
  FRAMEWORK "OpenVINO"
  DESCRIPTION "OpenVINO's C++ runtime on CPU, from the openvino wheel"
  FORMATS onnx:.onnx openvino-ir:.xml)

set(ov_found FALSE)
if(NOT INFERMARK_WITH_OPENVINO STREQUAL "OFF" AND EXISTS "${INFERMARK_VENV}/bin/python")
  execute_process(
    COMMAND "${INFERMARK_VENV}/bin/python" -c "from openvino.utils import get_cmake_path; print(get_cmake_path())"
    OUTPUT_VARIABLE ov_cmake_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE ov_rc)
  if(ov_rc EQUAL 0 AND EXISTS "${ov_cmake_dir}/OpenVINOConfig.cmake")
    find_package(OpenVINO QUIET COMPONENTS Runtime PATHS "${ov_cmake_dir}" NO_DEFAULT_PATH)
    set(ov_found ${OpenVINO_FOUND})
  endif()
endif()
infermark_backend_decide(openvino ${ov_found} build_ov)
if(build_ov)
  infermark_add_backend(openvino LIBRARIES openvino::runtime)
endif()
