# OpenCV DNN: Debian's libopencv-dnn-dev; libopencv-dev ships the CMake package
# (scripts/setup: install_debian_packages).
infermark_declare_backend(opencv
  ORDER 30
  FRAMEWORK "OpenCV DNN"
  DESCRIPTION "OpenCV's dnn module with its own CPU layers"
  FORMATS onnx:.onnx)

set(ocv_found FALSE)
if(NOT INFERMARK_WITH_OPENCV STREQUAL "OFF")
  find_package(OpenCV QUIET COMPONENTS core dnn)
  set(ocv_found ${OpenCV_FOUND})
endif()
infermark_backend_decide(opencv ${ocv_found} build_ocv)
if(build_ocv)
  infermark_add_backend(opencv
    SYSTEM_INCLUDES ${OpenCV_INCLUDE_DIRS}
    LIBRARIES opencv_core opencv_dnn)
endif()
