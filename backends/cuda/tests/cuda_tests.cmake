# Tests of the CUDA runtime layer that run without a GPU (README.md). Included at the end of the
# root directory (backends/cuda/CMakeLists.txt says why): optune_test() is defined by then, and
# paths are spelled from this file's directory since the current one is the root.
# GTest's imported targets are local to tests/, where it was found first.
find_package(GTest REQUIRED)

optune_test(test_cuda_nvrtc_compile SOURCES ${CMAKE_CURRENT_LIST_DIR}/nvrtc_compile_test.cpp LIBS optune::cuda_runtime)
target_compile_definitions(test_cuda_nvrtc_compile PRIVATE OPTUNE_NVRTC_EXECUTABLE="$<TARGET_FILE:optune-nvrtc>")
add_dependencies(test_cuda_nvrtc_compile optune-nvrtc)

# The toolkit's stub libcuda.so, where a toolkit is installed: the driver test shows the probe
# naming it for what it is.
find_file(OPTUNE_CUDA_STUB_LIBRARY libcuda.so
  PATHS /usr/local/cuda/lib64/stubs /usr/local/cuda/targets/x86_64-linux/lib/stubs NO_DEFAULT_PATH)
optune_test(test_cuda_driver SOURCES ${CMAKE_CURRENT_LIST_DIR}/cuda_driver_test.cpp LIBS optune::cuda_runtime)
target_compile_definitions(test_cuda_driver PRIVATE
  OPTUNE_CUDA_PROBE_EXECUTABLE="$<TARGET_FILE:optune-cuda-probe>"
  OPTUNE_CUDA_STUB_LIBRARY="${OPTUNE_CUDA_STUB_LIBRARY}")
add_dependencies(test_cuda_driver optune-cuda-probe)
# A stand-in driver (build/fake_libcuda/libcuda.so.1, never installed or linked): the driver test
# runs itself again with it first on the loader's path.
add_library(optune_fake_libcuda SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_libcuda.c)
set_target_properties(optune_fake_libcuda PROPERTIES OUTPUT_NAME cuda SOVERSION 1
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fake_libcuda)
target_compile_definitions(test_cuda_driver PRIVATE OPTUNE_FAKE_LIBCUDA_DIR="$<TARGET_FILE_DIR:optune_fake_libcuda>")
add_dependencies(test_cuda_driver optune_fake_libcuda)

# Our declarations against the toolkit's headers, where a toolkit is installed (the test compiles
# with cuda.h; nothing else in optune does).
find_path(CUDA_HEADER_DIR cuda.h HINTS /usr/local/cuda/include)
if(CUDA_HEADER_DIR)
  optune_test(test_cuda_abi SOURCES ${CMAKE_CURRENT_LIST_DIR}/cuda_abi_test.cpp LIBS optune::cuda_runtime)
  target_include_directories(test_cuda_abi PRIVATE ${CUDA_HEADER_DIR})
endif()
