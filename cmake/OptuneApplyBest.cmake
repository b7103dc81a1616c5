# optune_apply_best(<cmake-target> DB <file or URI> TARGET <optune-target> [DEVICE <device>]
#                   [WORKLOADS <key>...] [SUITE <suite.toml>])
#
# Compiles the best configs of an optune database (a SQLite file, or a PostgreSQL server's URI or
# service=NAME, as --db takes it) into <cmake-target>: `optune apply-best` writes
# optune_tuned.hpp (constexpr tables of tuned configs, with the default config for other shapes)
# into the target's build folder, which is added to its include path. The command runs at every
# build, because the database can change through its WAL file while the file's own time stays the
# same; it rewrites the header only when its content changes, so nothing rebuilds needlessly.
# WORKLOADS or SUITE name the workloads the application uses: each one without a tuned config gets
# a row with the config tuned for its nearest shape (the one optune's cost model ranks best for it
# among the other shapes of its template tuned on the device; `optune pick` shows the same), or,
# with nothing of its template tuned there, runs the default config; the build notes each.
# TARGET opencl[:...]: the header's tables are TunedKernel rows (build options and launch), run by
# optune::opencl::Runtime, which is linked to <cmake-target> (find_package(optune COMPONENTS opencl)).
#
# optune_apply_best(<cmake-target> DB <file> KERNEL <kernel.toml> [TARGET <optune-target>]
#                   [DEVICE <device>] [WORKLOADS <key>...])
# A user's kernel file instead: `optune apply-best --kernel` writes optune_kernel_<file stem>.hpp, a
# standalone table of the best config per tuned size and device (-D string, OpenCL launch), in
# namespace optune::tuned::kernel_<name>. Several kernels (and one optune_tuned.hpp) may serve one
# target; nothing is linked.
function(optune_apply_best target)
  cmake_parse_arguments(ARG "" "DB;TARGET;DEVICE;SUITE;KERNEL" "WORKLOADS" ${ARGN})
  if(ARG_KERNEL)
    _optune_apply_best_kernel(${target})
    return()
  endif()
  if(NOT ARG_DB OR NOT ARG_TARGET)
    message(FATAL_ERROR "optune_apply_best(${target} ...) needs DB <file> and TARGET <target>")
  endif()
  if(NOT OPTUNE_EXECUTABLE)
    message(FATAL_ERROR "optune_apply_best: OPTUNE_EXECUTABLE is not set (find_package(optune) sets it)")
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/optune_tuned/${target})
  set(header ${dir}/optune_tuned.hpp)
  set(args apply-best --db ${ARG_DB} --target ${ARG_TARGET} --out ${header})
  if(ARG_DEVICE)
    list(APPEND args --device ${ARG_DEVICE})
  endif()
  foreach(key IN LISTS ARG_WORKLOADS)
    list(APPEND args --workload ${key})
  endforeach()
  if(ARG_SUITE)
    list(APPEND args --suite ${ARG_SUITE})
  endif()
  add_custom_target(${target}_optune_tuned
    COMMAND ${OPTUNE_EXECUTABLE} ${args}
    BYPRODUCTS ${header}
    COMMENT "optune apply-best: ${ARG_DB} -> ${header}"
    VERBATIM)
  add_dependencies(${target} ${target}_optune_tuned)
  # A backend whose tables need a runtime links it to the target: its installed part of the
  # package config (backends/<name>.cmake) defines optune_apply_best_link_<name>.
  string(REGEX MATCH "^[a-z0-9_]+" _optune_backend "${ARG_TARGET}")
  if(COMMAND optune_apply_best_link_${_optune_backend})
    cmake_language(CALL optune_apply_best_link_${_optune_backend} ${target} ${ARG_TARGET})
  endif()
  target_include_directories(${target} PRIVATE ${dir})
endfunction()

# The KERNEL form of optune_apply_best, with its caller's ARG_ variables.
macro(_optune_apply_best_kernel target)
  if(NOT ARG_DB)
    message(FATAL_ERROR "optune_apply_best(${target} KERNEL ...) needs DB <file>")
  endif()
  if(ARG_SUITE)
    message(FATAL_ERROR "optune_apply_best(${target} KERNEL ...): name the kernel's sizes with WORKLOADS, not SUITE")
  endif()
  if(NOT OPTUNE_EXECUTABLE)
    message(FATAL_ERROR "optune_apply_best: OPTUNE_EXECUTABLE is not set (find_package(optune) sets it)")
  endif()
  get_filename_component(_optune_stem ${ARG_KERNEL} NAME_WE)
  set(_optune_dir ${CMAKE_CURRENT_BINARY_DIR}/optune_tuned/${target})
  set(_optune_header ${_optune_dir}/optune_kernel_${_optune_stem}.hpp)
  set(_optune_args apply-best --db ${ARG_DB} --kernel ${ARG_KERNEL} --out ${_optune_header})
  if(ARG_TARGET)
    list(APPEND _optune_args --target ${ARG_TARGET})
  endif()
  if(ARG_DEVICE)
    list(APPEND _optune_args --device ${ARG_DEVICE})
  endif()
  foreach(key IN LISTS ARG_WORKLOADS)
    list(APPEND _optune_args --workload ${key})
  endforeach()
  add_custom_target(${target}_optune_kernel_${_optune_stem}
    COMMAND ${OPTUNE_EXECUTABLE} ${_optune_args}
    BYPRODUCTS ${_optune_header}
    COMMENT "optune apply-best --kernel: ${ARG_DB} -> ${_optune_header}"
    VERBATIM)
  add_dependencies(${target} ${target}_optune_kernel_${_optune_stem})
  target_include_directories(${target} PRIVATE ${_optune_dir})
endmacro()
