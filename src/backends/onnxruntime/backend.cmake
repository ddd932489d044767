# ONNX Runtime: npm library + Debian headers in third_party/onnxruntime (scripts/setup: install_onnxruntime).
infermark_declare_backend(onnxruntime
  ORDER 10
  FRAMEWORK "ONNX Runtime"
  DESCRIPTION "ONNX Runtime's C++ API on its CPU execution provider"
  FORMATS onnx:.onnx)

set(ORT_ROOT "${INFERMARK_THIRD_PARTY}/onnxruntime")
set(ort_found FALSE)
if(EXISTS "${ORT_ROOT}/lib/libonnxruntime.so.1" AND EXISTS "${ORT_ROOT}/include/onnxruntime_cxx_api.h")
  set(ort_found TRUE)
endif()
infermark_backend_decide(onnxruntime ${ort_found} build_ort)
if(build_ort)
  infermark_add_backend(onnxruntime
    SYSTEM_INCLUDES "${ORT_ROOT}/include"
    # The .deb's libonnxruntime.so link is dangling; link the soname file itself.
    LIBRARIES "${ORT_ROOT}/lib/libonnxruntime.so.1")
  set_target_properties(infermark_backend_onnxruntime PROPERTIES BUILD_RPATH "${ORT_ROOT}/lib")
endif()
