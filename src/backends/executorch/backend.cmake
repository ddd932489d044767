# ExecuTorch: the runtime libraries, headers and CMake package that PyPI's executorch wheel ships,
# unpacked into third_party/executorch (scripts/setup: install_executorch). The .pte files come
# from the zoo (torch.export + the XNNPACK partitioner, in the on-demand third_party/llm-venv).
infermark_declare_backend(executorch
  ORDER 57
  FRAMEWORK "ExecuTorch"
  DESCRIPTION "PyTorch's on-device runtime (XNNPACK delegate, optimized CPU kernels) running exported programs (*.pte)"
  FORMATS executorch:.pte)

set(INFERMARK_EXECUTORCH_DIR "${CMAKE_SOURCE_DIR}/third_party/executorch")
set(executorch_found FALSE)
if(NOT INFERMARK_WITH_EXECUTORCH STREQUAL "OFF" AND EXISTS "${INFERMARK_EXECUTORCH_DIR}/lib/libexecutorch.so"
   AND EXISTS "${INFERMARK_EXECUTORCH_DIR}/include/executorch/runtime/executor/program.h"
   AND EXISTS "${INFERMARK_EXECUTORCH_DIR}/VERSION")
  set(executorch_found TRUE)
endif()
infermark_backend_decide(executorch ${executorch_found} build_executorch)
if(build_executorch)
  file(READ "${INFERMARK_EXECUTORCH_DIR}/VERSION" executorch_version)
  string(STRIP "${executorch_version}" executorch_version)
  set(executorch_lib "${INFERMARK_EXECUTORCH_DIR}/lib")
  # The XNNPACK delegate and the kernels register themselves when their libraries load, and
  # nothing refers to them by name: --no-as-needed keeps them among the backend's dependencies.
  infermark_add_backend(executorch
    LIBRARIES "-Wl,--no-as-needed" "${executorch_lib}/libexecutorch.so" "${executorch_lib}/libexecutorch_threadpool.so"
              "${executorch_lib}/libexecutorch_backend_xnnpack.so" "${executorch_lib}/libexecutorch_kernels_optimized.so"
              "${executorch_lib}/libexecutorch_kernels_quantized.so" "-Wl,--as-needed"
    # Its vendored c10 headers before Debian LibTorch's /usr/include/c10, which are another version.
    SYSTEM_INCLUDES "${INFERMARK_EXECUTORCH_DIR}/include" "${INFERMARK_EXECUTORCH_DIR}/include/executorch/runtime/core/portable_type/c10")
  # The definitions the package's CMake config asks its consumers for: the libraries were compiled
  # with the event tracer and the thread pool, and the vendored c10 headers need the first.
  target_compile_definitions(infermark_backend_executorch PRIVATE INFERMARK_EXECUTORCH_VERSION="${executorch_version}"
                             C10_USING_CUSTOM_GENERATED_MACROS ET_EVENT_TRACER_ENABLED ET_USE_THREADPOOL)
  set_target_properties(infermark_backend_executorch PROPERTIES BUILD_RPATH "${executorch_lib}")
endif()
