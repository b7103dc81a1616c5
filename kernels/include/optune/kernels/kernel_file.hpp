// The kernel file: a user's own kernel declared for tuning (issue 20), parsed into KernelSpec.
// A kernel file names a source (OpenCL C or C++), its entry, its arguments, the problem's extents,
// the knobs (tunable parameters, which reach the source as -D NAME=value), the rules a config must
// satisfy, the launch (an OpenCL NDRange, or a grid of blocks), and how to check an output.
// kernel_problem.hpp binds a spec to a problem size and a device: workload key, buffer sizes, the
// search space, a config's defines and launch. Expressions (expression.hpp) are parsed here, so a
// spec that loads is well-formed.
//
// The format (TOML; every field below; any other key is an error, so typos do not pass):
//
//   name = "transpose"      required; letters, digits, '_', '-', starting with a letter. The
//                           workload key is kernel.<name>.<extent><value>... (kernel_problem.hpp)
//   backend = "opencl"      required; a backend of this build that takes kernel files ("cpu",
//                           "opencl"): its traits (kernel_file_traits.hpp) give the device
//                           limits, reserved words and launch model below
//   source = "transpose.cl" required; path relative to this file; must exist
//   entry = "transpose"     required; the OpenCL kernel, or for cpu the extern "C" function
//                           taking the args in order: buffers as pointers (const for inputs),
//                           scalars by value (f32 float, i32 int32_t, ...). On backends whose
//                           traits allow template_entries, also a template instance name<args>,
//                           "matmul<float, TILE>": args of identifiers, numbers, ::, *, &, spaces
//                           and nested <>; knob and extent names among them (whole tokens) take
//                           the config's values (KernelProblem::entry)
//   description = "..."     optional; for people
//   build_options = ["-cl-mad-enable"]   optional; compiler options after the defines, each one
//                           token without whitespace (OpenCL build options, or the C++ compiler's)
//   flops = "2 * N"         optional expressions of extents and device limits (default 0): the
//   bytes = "8 * N * M"     work and the traffic of one run, for GFLOP/s and GB/s in records
//   args = [ {...}, ... ]   required; the kernel's arguments in order, each an inline table:
//     name                  required; an identifier, distinct among args
//     kind                  required; "buffer" | "scalar"
//     dtype                 required; f16 f32 f64 i8 u8 i16 u16 i32 u32 i64 u64 (f16 on OpenCL
//                           needs cl_khr_fp16, f64 cl_khr_fp64; a check compares in double)
//     count                 buffers, required: elements, an expression of extents and device limits
//     value                 scalars, required: an expression of extents and device limits; an
//                           integer dtype needs an integer in its range
//     init                  buffers: "random" | "zeros" | "ones" | "iota" (0, 1, 2, ...).
//                           random: uniform in [-1, 1) for floats, in [0, 100) for integers, from
//                           a fixed seed. Default for inputs: "random". An output without init
//                           is write-only: it is poisoned before a run (NaN, or a byte pattern
//                           for integers) and every element must be written; an output with init
//                           is read-write and starts from that init.
//     data = "x.bin"        buffers, instead of init: the initial values, raw little-endian
//                           elements of the dtype, exactly count of them (a path relative to
//                           this file); how Python's tune_kernel passes numpy arrays
//     output = true         buffers; what the check compares. At least one buffer is an output.
//   [extents]               required, at least one: NAME = integer from 1 to 2^31 - 1, in key
//                           order (kMaxKernelExtent). Names
//                           are identifiers not ending in a digit (the key reads N4096).
//                           `--shape N=1024,M=512` overrides them.
//   [knobs]                 required, at least one: NAME = [values...], a non-empty list of
//                           distinct numbers (integers or decimals) or of strings (tokens made of
//                           letters, digits and _ . + - * / ( ), e.g. "row_major"), at most
//                           4096 values (kMaxKnobValues). Order matters: neighbouring values are
//                           neighbours to the search. String knobs reach only the source;
//                           expressions use numeric knobs. All knobs together make at most
//                           2^64 configs (the product of their value counts).
//   [constraints]           optional
//     rules = ["TILE % WPT == 0", ...]   boolean expressions of extents, knobs and device limits;
//                           a config is valid when all hold
//   [launch]                opencl (NDRange launch): required; cpu (called once): not allowed
//     global = ["N / WPT", "M"]          1 to 3 expressions of extents, knobs and device limits:
//     local = ["TILE / WPT", "TILE"]     NDRange and work-group size, as many dims in both. For a
//                           config, each must be a positive integer, local must divide global
//                           (OpenCL 1.2), and the work-group must fit max_work_group_size and
//                           max_work_item_size_d; configs where not are invalid in the space.
//   [launch]                grid/block backends (the coming CUDA one; Kernel Tuner's terms):
//     grid = ["ceil_div(N, block_size_x)"]  required; 1 to 3 expressions of extents, knobs and
//                           device limits: blocks (the grid counts blocks: nothing need divide)
//     block = ["block_size_x"]  optional; threads per block, as many dims as grid. Absent: the
//                           knobs block_size_x, block_size_y, block_size_z that exist, each the
//                           dimension it names (1 where absent), as Kernel Tuner's
//                           block_size_names; no block and no knob block_size_x is an error
//     shared_memory = "TILE * 4"  optional expression: bytes of dynamic shared memory per block
//                           (default 0). For a config, sizes must be positive integers, the block
//                           must fit the device's threads per block (in all, per dimension) and
//                           shared_memory be an integer from 0 to its limit; configs where not are
//                           invalid in the space. global and local are refused here, and grid,
//                           block and shared_memory on opencl and cpu.
//   [check]                 optional; without it, an output is only checked to be written
//     reference = "transpose_naive"      a kernel (cpu: a function with the entry's signature)
//                           in `source`, built with a valid config's defines, run once per
//                           problem size on the same inputs
//     reference_source = "ref.cl"        optional; the reference's file instead of `source`
//     global = ["N", "M"]   opencl reference: its NDRange, expressions of extents and device
//     local = ["16", "16"]  limits (required); local optional (absent: the runtime picks)
//     grid = ["N / 256"]    grid/block reference: grid and block (both required) and an optional
//     block = ["256"]       shared_memory, expressions of extents and device limits; reference
//     shared_memory = "0"   may be a template instance as entry may
//     expected = "out.bin"  instead of reference: raw little-endian values of the output, or a
//                           list of files, one per output buffer in arg order
//     rtol = 1e-5           |out - ref| <= atol + rtol * |ref|. Defaults by the first output's
//     atol = 1e-6           dtype: f32/f64 1e-5 and 1e-6, f16 1e-2 and 1e-3, integers 0 and 0
//
// Names share one namespace: extents, knobs and the backend's device limits (its traits)
// must be distinct identifiers, and not an expression function's name (min, max, div, ...).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optune/kernels/data_type.hpp"
#include "optune/kernels/expression.hpp"
#include "optune/kernels/kernel_file_traits.hpp"
#include "optune/kernels/workload.hpp"

namespace optune::kernels {


struct KernelArg {
  enum class Kind { kBuffer, kScalar };
  std::string name;
  Kind kind = Kind::kBuffer;
  DataType dtype = DataType::kF32;
  std::optional<Expression> count;  // buffers
  std::optional<Expression> value;  // scalars
  std::optional<BufferInit> init;   // buffers; set for every input without data (random by default)
  std::filesystem::path data;       // buffers: the initial values' file (absolute), instead of init
  bool is_output = false;
  bool is_buffer() const { return kind == Kind::kBuffer; }
};

// Values of one knob at most: more than any search tries of one knob, and each is a point of the
// cost model's features and of every neighbourhood walk.
inline constexpr std::size_t kMaxKnobValues = 4096;

// A knob's values, numbers or strings (one of the two lists is empty).
struct KernelKnob {
  std::string name;
  std::vector<double> numbers;
  std::vector<std::string> strings;
  bool is_numeric() const { return strings.empty(); }
  std::size_t size() const { return is_numeric() ? numbers.size() : strings.size(); }
  // The text of one value as it reaches the source: "16", "0.5", "row_major".
  std::string value_text(std::size_t option) const;
};

// An NDRange launch, or a grid/block one (kGridBlock), which keeps its grid in `global` and its
// block in `local`, as LaunchSize does.
struct KernelLaunch {
  std::vector<Expression> global;  // 1 to 3 dims: work-items, or blocks of the grid
  std::vector<Expression> local;   // as many as global (an NDRange reference's may be empty): threads per block
  std::optional<Expression> shared_memory;  // kGridBlock: bytes of dynamic shared memory; absent: 0
};

struct KernelCheck {
  enum class Kind { kNone, kReference, kExpected };
  Kind kind = Kind::kNone;
  std::string reference;                  // kReference: the kernel or function
  std::filesystem::path reference_source; // kReference: absolute; `source` unless given
  std::optional<KernelLaunch> reference_launch;  // kReference with an NDRange or grid/block launch
  std::vector<std::filesystem::path> expected;   // kExpected: absolute, one per output buffer
  double rtol = 0;
  double atol = 0;
};

struct KernelSpec {
  std::filesystem::path file;    // the kernel file, as given (messages name it)
  std::string name;
  std::string backend;           // "opencl" | "cpu" | ...
  const KernelFileTraits* traits = nullptr;  // the backend's (static in its library; set by the parser)
  std::filesystem::path source;  // absolute
  std::string entry;             // an identifier, or with template_entries "name<args>"
  std::string description;
  std::vector<std::string> build_options;
  std::optional<Expression> flops;
  std::optional<Expression> bytes;
  std::vector<KernelArg> args;
  std::vector<Extent> extents;   // in file order
  std::vector<KernelKnob> knobs; // in file order
  std::vector<Expression> rules;
  std::optional<KernelLaunch> launch;  // NDRange and grid/block backends
  KernelCheck check;

  // The names every expression of this spec is parsed over, and evaluated with values in this
  // order: extents, then knobs, then the backend's device limits.
  std::vector<std::string> expression_names() const;
};

// Reads and parses a kernel file. Throws std::invalid_argument with one line naming the file, the
// line where toml++ knows it, the field and the problem:
//   "configs/kernels/t.toml:12: knobs.TILE: no values"
// `backends` are those the file may name (backends::kernel_file_backends(), or
// backends::load_kernel_file, which passes them).
KernelSpec load_kernel_file(const std::filesystem::path& path, const KernelFileBackends& backends);
// The same on text already read; `path` names it in messages and anchors relative paths.
KernelSpec parse_kernel_file(std::string_view text, const std::filesystem::path& path, const KernelFileBackends& backends);

}  // namespace optune::kernels
