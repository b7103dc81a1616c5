# find_package(optune)'s part for the OpenCL backend, installed as lib/cmake/optune/backends/opencl.cmake.
# OpenCL is optional for applications: optune::opencl (the OpenCL runtime of build-time
# consumption) needs it; CPU-only applications do not. find_package(optune COMPONENTS opencl)
# requires it, OPTIONAL_COMPONENTS opencl sets optune_opencl_FOUND.
find_package(OpenCL QUIET)
set(optune_opencl_FOUND ${OpenCL_FOUND})

# optune_apply_best(... TARGET opencl[:...]): the tables are run by optune::opencl::Runtime.
function(optune_apply_best_link_opencl target optune_target)
  if(NOT TARGET optune::opencl OR NOT optune_opencl_FOUND)
    message(FATAL_ERROR "optune_apply_best(${target} ... TARGET ${optune_target}) needs optune::opencl, "
                        "which needs OpenCL: find_package(optune COMPONENTS opencl)")
  endif()
  target_link_libraries(${target} PRIVATE optune::opencl)
endfunction()
