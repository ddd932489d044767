# Paddle Inference: the C++ API inside PyPI's paddlepaddle wheel, installed by scripts/setup
# (install_paddle) into third_party/paddle-venv. The wheel has no headers: the calls the backend
# makes are declared in paddle_inference_api.hpp for the version named here, which the backend
# also checks at load. libpaddle.so is a Python extension as well and refers to CPython's
# symbols, so the backend links libpython3.11 (nothing initialises an interpreter).
infermark_declare_backend(paddle
  ORDER 58
  FRAMEWORK "Paddle Inference"
  DESCRIPTION "Baidu Paddle Inference (FastDeploy's CPU runtime, oneDNN) running X2Paddle-converted folders (*.paddle)"
  FORMATS paddle:.paddle)

set(INFERMARK_PADDLE_VERSION "3.3.1")
file(GLOB paddle_library "${CMAKE_SOURCE_DIR}/third_party/paddle-venv/lib/python3.*/site-packages/paddle/base/libpaddle.so")
find_library(INFERMARK_PYTHON311_LIBRARY NAMES python3.11 libpython3.11.so.1.0)
set(paddle_found FALSE)
if(NOT INFERMARK_WITH_PADDLE STREQUAL "OFF" AND paddle_library AND INFERMARK_PYTHON311_LIBRARY)
  set(paddle_found TRUE)
endif()
infermark_backend_decide(paddle ${paddle_found} build_paddle)
if(build_paddle)
  get_filename_component(paddle_base "${paddle_library}" DIRECTORY)
  infermark_add_backend(paddle LIBRARIES "${paddle_library}" "-Wl,--no-as-needed" "${INFERMARK_PYTHON311_LIBRARY}" "-Wl,--as-needed")
  target_compile_definitions(infermark_backend_paddle PRIVATE INFERMARK_PADDLE_VERSION="${INFERMARK_PADDLE_VERSION}")
  # libpaddle.so finds its own libraries (../libs) by its RUNPATH.
  set_target_properties(infermark_backend_paddle PROPERTIES BUILD_RPATH "${paddle_base}")
endif()
