# LibTorch: Debian's libtorch-dev, TorchConfig.cmake (scripts/setup: install_debian_packages).
infermark_declare_backend(libtorch
  ORDER 40
  FRAMEWORK "LibTorch"
  DESCRIPTION "LibTorch running TorchScript modules on CPU"
  FORMATS torchscript:.pt,.torchscript)

set(torch_found FALSE)
if(NOT INFERMARK_WITH_LIBTORCH STREQUAL "OFF")
  find_package(Torch QUIET)
  set(torch_found ${Torch_FOUND})
endif()
infermark_backend_decide(libtorch ${torch_found} build_torch)
if(build_torch)
  infermark_add_backend(libtorch
    LIBRARIES ${TORCH_LIBRARIES}
    SYSTEM_INCLUDES ${TORCH_INCLUDE_DIRS})
endif()
