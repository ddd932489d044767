# One option per backend: INFERMARK_WITH_<NAME>=AUTO|ON|OFF. AUTO builds the backend when its
# framework is found; ON makes a missing framework a configure error; OFF skips it.

function(infermark_backend_option name)
  string(TOUPPER "${name}" upper)
  set(INFERMARK_WITH_${upper} AUTO CACHE STRING "Build the ${name} backend: AUTO, ON or OFF")
  set_property(CACHE INFERMARK_WITH_${upper} PROPERTY STRINGS AUTO ON OFF)
endfunction()

# Decides whether to build backend `name` given whether its framework was `found`.
function(infermark_backend_decide name found out_var)
  string(TOUPPER "${name}" upper)
  set(mode "${INFERMARK_WITH_${upper}}")
  if(mode STREQUAL "OFF")
    set(${out_var} FALSE PARENT_SCOPE)
    message(STATUS "infermark backend ${name}: off")
  elseif(found)
    set(${out_var} TRUE PARENT_SCOPE)
    message(STATUS "infermark backend ${name}: building")
  elseif(mode STREQUAL "ON")
    message(FATAL_ERROR "INFERMARK_WITH_${upper}=ON but its framework was not found (run scripts/setup)")
  else()
    set(${out_var} FALSE PARENT_SCOPE)
    message(STATUS "infermark backend ${name}: framework not found, skipped")
  endif()
endfunction()

function(infermark_add_backend name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES;SYSTEM_INCLUDES" ${ARGN})
  set(target infermark_backend_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_compile_options(${target} PRIVATE ${INFERMARK_WARNINGS})
  target_include_directories(${target} SYSTEM PRIVATE ${ARG_SYSTEM_INCLUDES})
  target_link_libraries(${target} PRIVATE infermark_core ${ARG_LIBRARIES})
  set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${INFERMARK_PLUGIN_DIR}" PREFIX "lib")
  add_dependencies(infermark ${target})
endfunction()

# --- ONNX Runtime: npm library + Debian headers in third_party/onnxruntime -------------------
infermark_backend_option(onnxruntime)
set(ORT_ROOT "${INFERMARK_THIRD_PARTY}/onnxruntime")
set(ort_found FALSE)
if(EXISTS "${ORT_ROOT}/lib/libonnxruntime.so.1" AND EXISTS "${ORT_ROOT}/include/onnxruntime_cxx_api.h")
  set(ort_found TRUE)
endif()
infermark_backend_decide(onnxruntime ${ort_found} build_ort)
if(build_ort)
  infermark_add_backend(onnxruntime
    SOURCES src/backends/onnxruntime/onnxruntime_backend.cpp
    SYSTEM_INCLUDES "${ORT_ROOT}/include"
    # The .deb's libonnxruntime.so link is dangling; link the soname file itself.
    LIBRARIES "${ORT_ROOT}/lib/libonnxruntime.so.1")
  set_target_properties(infermark_backend_onnxruntime PROPERTIES BUILD_RPATH "${ORT_ROOT}/lib")
endif()

# --- OpenVINO: the C++ package inside the PyPI wheel in .venv ---------------------------------
infermark_backend_option(openvino)
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
  infermark_add_backend(openvino
    SOURCES src/backends/openvino/openvino_backend.cpp
    LIBRARIES openvino::runtime)
endif()

# --- OpenCV DNN: Debian's libopencv-dnn-dev (libopencv-dev ships the CMake package) ------------
infermark_backend_option(opencv)
set(ocv_found FALSE)
if(NOT INFERMARK_WITH_OPENCV STREQUAL "OFF")
  find_package(OpenCV QUIET COMPONENTS core dnn)
  set(ocv_found ${OpenCV_FOUND})
endif()
infermark_backend_decide(opencv ${ocv_found} build_ocv)
if(build_ocv)
  infermark_add_backend(opencv
    SOURCES src/backends/opencv/opencv_backend.cpp src/backends/opencv/onnx_input_reader.cpp
    SYSTEM_INCLUDES ${OpenCV_INCLUDE_DIRS}
    LIBRARIES opencv_core opencv_dnn)
endif()

# --- LibTorch: Debian's libtorch-dev (TorchConfig.cmake) ---------------------------------------
infermark_backend_option(libtorch)
set(torch_found FALSE)
if(NOT INFERMARK_WITH_LIBTORCH STREQUAL "OFF")
  find_package(Torch QUIET)
  set(torch_found ${Torch_FOUND})
endif()
infermark_backend_decide(libtorch ${torch_found} build_torch)
if(build_torch)
  infermark_add_backend(libtorch
    SOURCES src/backends/libtorch/libtorch_backend.cpp
    LIBRARIES ${TORCH_LIBRARIES}
    SYSTEM_INCLUDES ${TORCH_INCLUDE_DIRS})
endif()

# --- llama.cpp: built from the pinned source into third_party/llama.cpp/install by scripts/setup ---
infermark_backend_option(llamacpp)
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
    SOURCES src/backends/llamacpp/llamacpp_backend.cpp
    SYSTEM_INCLUDES "${LLAMACPP_ROOT}/install/include"
    LIBRARIES "${LLAMACPP_ROOT}/install/lib/libllama.so")
  target_compile_definitions(infermark_backend_llamacpp PRIVATE
    INFERMARK_LLAMACPP_VERSION="${llamacpp_version}" INFERMARK_LLAMACPP_SOURCE="${llamacpp_source}")
  set_target_properties(infermark_backend_llamacpp PROPERTIES BUILD_RPATH "${LLAMACPP_ROOT}/install/lib")
endif()

# --- TFLite: LiteRT's interpreter from the PyPI wheel ai-edge-litert in .venv -------------------
# No registry package ships a TFLite C/C++ library with matching headers, so the backend drives the
# wheel's Python API from an embedded CPython: the venv's interpreter (Debian's python3.11).
infermark_backend_option(tflite)
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
  infermark_add_backend(tflite
    SOURCES src/backends/tflite/tflite_backend.cpp src/backends/tflite/embedded_python.cpp
    LIBRARIES Python3::Python ${CMAKE_DL_LIBS})
  target_compile_definitions(infermark_backend_tflite PRIVATE INFERMARK_TFLITE_PYTHON="${INFERMARK_VENV}/bin/python")
endif()
