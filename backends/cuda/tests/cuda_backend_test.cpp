// The CUDA backend on a machine without a GPU: its targets, the no-driver answers, its kernel
// files bound to a paper H100, and its builder compiling real candidates with NVRTC through
// optune-nvrtc (compile errors as records, the cubin cache, templated entries, a reference in the
// module). Running candidates needs the GPU machine (README.md).
#include <algorithm>
#include <filesystem>
#include <random>
#include <fstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "artifact.hpp"
#include "cuda_device.hpp"
#include "driver_api.hpp"
#include "nvrtc_api.hpp"
#include "optune/backends/registry.hpp"
#include "optune/db/database.hpp"
#include "optune/kernels/kernel_file_template.hpp"
#include "optune/tuner/results/kernel_header.hpp"

namespace {

namespace fs = std::filesystem;
using namespace optune;
using optune::backends::cuda::CudaArtifact;

const measure::Backend& backend() { return backends::find_backend("cuda"); }

// An H100 SXM as cuDeviceGetAttribute describes it.
kernels::DeviceInfo paper_h100() {
  backends::cuda::CudaDeviceInfo device;
  device.name = "NVIDIA H100 80GB HBM3";
  device.compute_major = 9;
  device.sm_count = 132;
  device.total_memory_bytes = std::uint64_t{80} << 30;
  device.l2_bytes = 50 << 20;
  device.max_threads_per_block = 1024;
  device.max_block_dims = {1024, 1024, 64};
  device.max_grid_dims = {2147483647, 65535, 65535};
  device.max_shared_per_block = 48 << 10;
  device.max_shared_per_block_optin = 227 << 10;
  device.registers_per_block = 65536;
  device.warp_size = 32;
  device.clock_khz = 1980000;
  device.driver_version = "580.159.04";
  return backends::cuda::cuda_device_info(device);
}

// The backend's builder as the command makes it here: optune-nvrtc beside it, its own kernels in
// the source tree.
std::unique_ptr<measure::Builder> source_tree_builder() {
  measure::BuildSettings settings;
  settings.bin_dir = OPTUNE_BIN_DIR;
  settings.kernel_source_dirs = {{"cuda", std::string(OPTUNE_SOURCE_DIR) + "/backends/cuda/kernels"}};
  return backend().make_builder(kernels::Target{"cuda", ""}, settings);
}

// The task of a workload of the template's op ("M,N,K", "N=..,C=..", a dtype) of a built-in
// template on a device.
std::shared_ptr<measure::MeasureTask> template_task(const kernels::KernelTemplate& kernel_template, const char* shape,
                                                    const char* dtype, const kernels::DeviceInfo& device) {
  auto task = std::make_shared<measure::MeasureTask>();
  task->workload = kernels::parse_workload(kernel_template.op(), shape);
  task->workload.dtype = kernels::parse_data_type(dtype);
  task->kernel_template = &kernel_template;
  task->target = kernels::Target{"cuda", ""};
  task->device = device;
  task->space = kernel_template.space(task->workload, device);
  return task;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// A scaled vector add whose entry is a template over the elements per thread (the knob TILE is
// also a macro, as every knob is); TILE 3 does not compile, and the reference lives in a file of
// its own.
constexpr const char* kSource = R"(
#include "tile_check.cuh"
template <int PER_THREAD>
__global__ void scaled_add(const float* x, float* y, float a, int n) {
  const int first = (blockIdx.x * block_size_x + threadIdx.x) * PER_THREAD;
  for (int i = first; i < first + PER_THREAD && i < n; ++i) y[i] = a * x[i] + y[i];
}
)";
constexpr const char* kHeader = "#if TILE == 3\n#error TILE 3 is refused\n#endif\n";
constexpr const char* kReference = R"(
extern "C" __global__ void scaled_add_reference(const float* x, float* y, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";
constexpr const char* kFile = R"toml(
name = "scaled_add"
backend = "cuda"
source = "scaled_add.cu"
entry = "scaled_add<TILE>"
build_options = ["--use_fast_math"]
bytes = "12 * N"
args = [
  { name = "x", kind = "buffer", dtype = "f32", count = "N", init = "random" },
  { name = "y", kind = "buffer", dtype = "f32", count = "N", init = "random", output = true },
  { name = "a", kind = "scalar", dtype = "f32", value = "0.5" },
  { name = "n", kind = "scalar", dtype = "i32", value = "N" },
]
[extents]
N = 100000
[knobs]
block_size_x = [64, 128, 2048]
TILE = [1, 2, 3]
[launch]
grid = ["ceil_div(N, block_size_x * TILE)"]
shared_memory = "block_size_x * 4"
[check]
reference = "scaled_add_reference"
reference_source = "reference.cu"
grid = ["ceil_div(N, 256)"]
block = ["256"]
)toml";

class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("optune_cuda_backend_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    write(dir_ / "scaled_add.cu", kSource);
    write(dir_ / "tile_check.cuh", kHeader);
    write(dir_ / "reference.cu", kReference);
    write(dir_ / "scaled_add.toml", kFile);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::shared_ptr<measure::MeasureTask> task() {
    auto task = std::make_shared<measure::MeasureTask>();
    task->owned_template = backend().kernel_file_template(backends::load_kernel_file(dir_ / "scaled_add.toml"));
    task->kernel_template = task->owned_template.get();
    task->target = kernels::Target{"cuda", "0"};
    task->device = paper_h100();
    task->workload = kernels::kernel_file_of(*task->kernel_template)->workload("", task->device);
    task->space = task->kernel_template->space(task->workload, task->device);
    return task;
  }

  std::unique_ptr<measure::Builder> builder() {
    measure::BuildSettings settings;
    settings.bin_dir = OPTUNE_BIN_DIR;
    settings.program_cache_dir = (dir_ / "cache").string();
    settings.jobs = 2;
    return backend().make_builder(kernels::Target{"cuda", "0"}, settings);
  }

  std::vector<measure::MeasureInput> inputs(const std::shared_ptr<measure::MeasureTask>& t,
                                            const std::vector<std::pair<int, int>>& configs) {
    std::vector<measure::MeasureInput> list;
    for (auto [block, tile] : configs)
      list.push_back({t, t->space.from_json({{"block_size_x", block}, {"TILE", tile}})});
    return list;
  }

  fs::path dir_;
};

TEST(CudaBackend, IsRegisteredWithOrdinalTargets) {
  EXPECT_EQ(backend().target_forms(), "cuda, cuda:<ordinal>");
  EXPECT_EQ(backend().canonical_spec(""), "");
  EXPECT_EQ(backend().canonical_spec("007"), "7");
  EXPECT_EQ(backends::parse_target("cuda:1").str(), "cuda:1");
  for (const char* bad : {"x", "-1", "0:1", "123456"}) {
    try {
      backend().canonical_spec(bad);
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find("bad CUDA device '" + std::string(bad) + "'"), std::string::npos)
          << error.what();
    }
  }
}

TEST(CudaBackend, WithoutADriverThereIsNoDeviceAndTheTargetNamesWhatIsMissing) {
  if (backends::cuda::DriverApi::get().is_available()) GTEST_SKIP() << "a CUDA driver is present";
  EXPECT_TRUE(backend().devices().empty());
  try {
    backend().device(backends::parse_target("cuda"));
    ADD_FAILURE() << "a device without a driver";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_TRUE(message.starts_with("target cuda: no CUDA driver (libcuda.so.1")) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(CudaBackend, DeviceInfoCarriesTheLimitsKernelFilesName) {
  const kernels::DeviceInfo h100 = paper_h100();
  EXPECT_EQ(h100.kind, "cuda");
  EXPECT_EQ(h100.nvidia_compute_capability(), 90);
  const auto& traits = *backend().kernel_file_traits();
  const auto names = traits.limit_names();
  const auto values = traits.limit_values(h100);
  auto value = [&](const std::string& name) {
    const auto at = std::find(names.begin(), names.end(), name);
    return at == names.end() ? -1.0 : values[at - names.begin()];
  };
  EXPECT_EQ(value("max_threads_per_block"), 1024);
  EXPECT_EQ(value("max_block_dim_z"), 64);
  EXPECT_EQ(value("max_grid_dim_y"), 65535);
  EXPECT_EQ(value("max_shared_memory_per_block"), 227 * 1024);
  EXPECT_EQ(value("multiprocessor_count"), 132);
  EXPECT_EQ(value("warp_size"), 32);
  EXPECT_EQ(value("compute_capability"), 90);
  // The fingerprint (records' key) holds the attributes, and reads back the same.
  EXPECT_EQ(kernels::DeviceInfo::from_fingerprint(h100.fingerprint()).fingerprint_id(), h100.fingerprint_id());
}

TEST_F(CudaBackendTest, SpaceHoldsBlocksToTheDevice) {
  const auto t = task();
  // 2048 threads exceed the block limit: only 64 and 128 remain, with 3 tiles each.
  std::size_t valid = 0;
  for (std::uint64_t i = 0; i < t->space.size(); ++i) valid += t->space.is_valid(t->space.from_index(i));
  EXPECT_EQ(valid, 6u);
  EXPECT_EQ(t->space.to_json(t->kernel_template->default_config(t->workload, t->device, t->space)),
            nlohmann::json({{"block_size_x", 64}, {"TILE", 1}}));
}

TEST_F(CudaBackendTest, BuilderCompilesCandidatesWithTheirReferenceAndRecordsCompileErrors) {
  if (!backends::cuda::NvrtcApi::get().is_available()) GTEST_SKIP() << "no NVRTC here";
  const auto t = task();
  auto build = builder();  // its artifacts live as long as it
  auto results = build->build(inputs(t, {{64, 1}, {128, 2}, {128, 3}}));
  ASSERT_EQ(results.size(), 3u);
  for (int i : {0, 1}) {
    ASSERT_TRUE(results[i].ok()) << results[i].message;
    const CudaArtifact artifact = backends::cuda::read_cuda_artifact(results[i].artifact);
    EXPECT_EQ(artifact.arch, "sm_90a");
    EXPECT_FALSE(artifact.is_ptx);
    EXPECT_EQ(std::string(artifact.module.data(), 4), "\x7f" "ELF");
    EXPECT_TRUE(artifact.entry.starts_with("_Z10scaled_addILi")) << artifact.entry;  // the instance's mangled name
    EXPECT_EQ(artifact.reference, "scaled_add_reference");
    EXPECT_EQ(artifact.workload_key, t->workload.key());
    EXPECT_FALSE(artifact.from_cache);
    EXPECT_EQ(artifact.launch.local[0], i == 0 ? 64 : 128);
    EXPECT_EQ(artifact.launch.global[0], i == 0 ? 1563 : 391);  // ceil(100000 / (64 * 1)), ceil(100000 / 256)
    EXPECT_EQ(artifact.launch.shared_memory_bytes, i == 0 ? 256 : 512);
  }
  EXPECT_NE(results[0].artifact, results[1].artifact);
  EXPECT_EQ(results[2].error, measure::ErrorKind::kBuildError);
  EXPECT_NE(results[2].message.find("TILE 3 is refused"), std::string::npos) << results[2].message;
}

TEST_F(CudaBackendTest, SecondBuildOfACandidateComesFromTheCubinCache) {
  if (!backends::cuda::NvrtcApi::get().is_available()) GTEST_SKIP() << "no NVRTC here";
  const auto t = task();
  auto first_builder = builder(), second_builder = builder(), third_builder = builder();
  auto first = first_builder->build(inputs(t, {{64, 2}}));
  ASSERT_TRUE(first[0].ok()) << first[0].message;
  auto second = second_builder->build(inputs(t, {{64, 2}}));
  ASSERT_TRUE(second[0].ok()) << second[0].message;
  const CudaArtifact cached = backends::cuda::read_cuda_artifact(second[0].artifact);
  EXPECT_TRUE(cached.from_cache);
  EXPECT_EQ(cached.module, backends::cuda::read_cuda_artifact(first[0].artifact).module);
  // A header beside the source is part of the key: editing it compiles again.
  write(dir_ / "tile_check.cuh", std::string(kHeader) + "// edited\n");
  auto third = third_builder->build(inputs(t, {{64, 2}}));
  ASSERT_TRUE(third[0].ok()) << third[0].message;
  EXPECT_FALSE(backends::cuda::read_cuda_artifact(third[0].artifact).from_cache);
}

// `apply-best --kernel`'s table of a CUDA kernel file: each row names the instance to start and its
// grid, block and shared memory, and the header compiles.
TEST_F(CudaBackendTest, KernelHeaderRowsCarryTheEntryGridBlockAndSharedMemory) {
  const auto t = task();
  db::TuningRecord record;
  record.workload_key = t->workload.key();
  record.template_name = t->kernel_template->name();
  record.target = "cuda:0";
  record.device_fingerprint = t->device.fingerprint();
  record.device_id = t->device.fingerprint_id();
  record.config = {{"block_size_x", 128}, {"TILE", 2}};
  record.costs = {1e-5, 1e-5, 1e-5};
  record.median_seconds = 1e-5;
  record.gflops = 12.0 * 100000 / 1e-5 / 1e9;  // GB/s: the file gives bytes
  record.timestamp = 1000;
  record.tuner = "xgb";
  record.run_id = "run-1";
  const std::string path = (dir_ / "records.db").string();
  {
    auto database = db::Database::open(path);
    database.insert({record});
  }
  const auto header = tuner::make_kernel_header(db::Database::open(path, db::Database::Mode::kReadOnly),
                                                *t->kernel_template, {});
  ASSERT_EQ(header.rows, 1u) << header.text;
  EXPECT_NE(header.text.find("std::string_view entry;"), std::string::npos) << header.text;
  EXPECT_NE(header.text.find("\"scaled_add<2>\", 1, {391, 1, 1}, {128, 1, 1}, 512}"), std::string::npos) << header.text;
  EXPECT_NE(header.text.find("entry scaled_add<1>, grid {1563, 1, 1}, block {64, 1, 1}, shared memory 256 bytes"),
            std::string::npos)
      << header.text;
  write(dir_ / "tuned.hpp", header.text);
  write(dir_ / "use.cpp", "#include \"tuned.hpp\"\nint main() { return 0; }\n");
  const std::string command = "c++ -std=c++17 -fsyntax-only " + (dir_ / "use.cpp").string() + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << header.text;
}

// Every CUDA example of configs/kernels compiles with NVRTC for the paper H100, in its default
// config and a few others drawn from its space (running them is the GPU machine's part).
TEST(CudaExamples, DefaultAndSampledConfigsCompile) {
  if (!backends::cuda::NvrtcApi::get().is_available()) GTEST_SKIP() << "no NVRTC here";
  auto builder = source_tree_builder();
  std::vector<measure::MeasureInput> inputs;
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(OPTUNE_SOURCE_DIR) / "configs/kernels")) {
    if (entry.path().extension() != ".toml") continue;
    const kernels::KernelSpec spec = backends::load_kernel_file(entry.path());
    if (spec.backend != "cuda") continue;
    ++files;
    auto task = std::make_shared<measure::MeasureTask>();
    task->owned_template = backend().kernel_file_template(spec);
    task->kernel_template = task->owned_template.get();
    task->device = paper_h100();
    task->workload = kernels::kernel_file_of(*task->kernel_template)->workload("", task->device);
    task->space = task->kernel_template->space(task->workload, task->device);
    inputs.push_back({task, task->kernel_template->default_config(task->workload, task->device, task->space)});
    std::mt19937_64 rng(7);
    for (auto& config : task->space.sample_valid_distinct(rng, 2)) inputs.push_back({task, config});
  }
  EXPECT_GE(files, 3u);
  const auto results = builder->build(inputs);
  for (std::size_t i = 0; i < results.size(); ++i)
    EXPECT_TRUE(results[i].ok()) << inputs[i].task->workload.key() << " "
                                 << inputs[i].task->space.to_json(inputs[i].config).dump() << ": " << results[i].message;
}

// gemm.cuda's candidates compile for the paper H100 in both dtypes, from the backend's own kernels.
TEST(CudaGemmTemplate, CandidatesCompileInBf16AndF16AndEdgesOfTheSpaceAreRefused) {
  if (!backends::cuda::NvrtcApi::get().is_available()) GTEST_SKIP() << "no NVRTC here";
  const auto& gemm = backends::find_template("gemm.cuda");
  const kernels::DeviceInfo h100 = paper_h100();
  auto builder = source_tree_builder();
  std::vector<measure::MeasureInput> inputs;
  for (const char* dtype : {"bf16", "f16"}) {
    auto task = template_task(gemm, "200,136,72", dtype, h100);
    inputs.push_back({task, gemm.default_config(task->workload, h100, task->space)});
    // A large tile (64 x 64 per warp, the most accumulators a thread may hold) in a short pipeline.
    inputs.push_back({task, task->space.from_json({{"bm", 256}, {"bn", 128}, {"bk", 64}, {"wm", 4}, {"wn", 2},
                                                   {"stages", 2}, {"group_m", 1}})});
    EXPECT_TRUE(task->space.is_valid(inputs.back().config));
  }
  const auto results = builder->build(inputs);
  for (const auto& result : results) {
    ASSERT_TRUE(result.ok()) << result.message;
    const CudaArtifact artifact = backends::cuda::read_cuda_artifact(result.artifact);
    EXPECT_EQ(artifact.entry, "gemm_mma");
    EXPECT_GT(artifact.launch.shared_memory_bytes, 0);
  }
  // 200 x 136 in 128 x 128 tiles: 2 x 2 blocks of 4 warps.
  const CudaArtifact first = backends::cuda::read_cuda_artifact(results[0].artifact);
  EXPECT_EQ(first.launch.global[0], 4);
  EXPECT_EQ(first.launch.local[0], 128);
  // K not a multiple of 8, or a device before tensor cores' bf16: not the template's.
  kernels::Workload odd = kernels::parse_workload(kernels::Op::kGemm, "64,64,60");
  odd.dtype = kernels::DataType::kBF16;
  EXPECT_FALSE(gemm.applies(odd, h100));
  kernels::DeviceInfo volta = h100;
  volta.isa = {"sm_70"};
  EXPECT_FALSE(gemm.applies(inputs[0].task->workload, volta));
}

// The Hopper templates: gemm_tma.cuda is the default GEMM there (ahead of gemm_wgmma.cuda and
// gemm.cuda); both compile for sm_90a in both dtypes, at an edge shape too; on Ampere neither
// applies. gemm_tma's artifact carries the tensor maps of A and B its kernel reads.
TEST(CudaGemmTemplate, HopperTemplatesAreTheDefaultThereAndTheirCandidatesCompile) {
  const kernels::DeviceInfo h100 = paper_h100();
  kernels::Workload workload = kernels::parse_workload(kernels::Op::kGemm, "200,136,72");
  workload.dtype = kernels::DataType::kBF16;
  EXPECT_EQ(backends::default_template(workload, "cuda", h100).name(), "gemm_tma.cuda");
  kernels::DeviceInfo a100 = h100;
  a100.isa = {"sm_80"};
  EXPECT_EQ(backends::default_template(workload, "cuda", a100).name(), "gemm.cuda");
  if (!backends::cuda::NvrtcApi::get().is_available()) GTEST_SKIP() << "no NVRTC here";
  auto builder = source_tree_builder();
  for (const char* name : {"gemm_wgmma.cuda", "gemm_tma.cuda"}) {
    SCOPED_TRACE(name);
    const auto& hopper = backends::find_template(name);
    std::vector<measure::MeasureInput> inputs;
    for (const char* shape : {"200,136,72", "4096,4096,4096"}) {
      for (const char* dtype : {"bf16", "f16"}) {
        auto task = template_task(hopper, shape, dtype, h100);
        inputs.push_back({task, hopper.default_config(task->workload, h100, task->space)});
      }
    }
    const auto results = builder->build(inputs);
    for (const auto& result : results) ASSERT_TRUE(result.ok()) << result.message;
    const CudaArtifact big = backends::cuda::read_cuda_artifact(results[2].artifact);
    if (std::string(name) == "gemm_wgmma.cuda") {
      EXPECT_EQ(big.entry, "gemm_wgmma");
      // 4096^3 in the default 128 x 256 tiles of two warpgroups: 32 x 16 blocks of 256 threads.
      EXPECT_EQ(big.launch.global[0], 512);
      EXPECT_EQ(big.launch.local[0], 256);
      EXPECT_EQ(big.launch.shared_memory_bytes, 3 * (128 + 256) * 128 + 1024);
      EXPECT_TRUE(big.tensor_maps.empty());
      continue;
    }
    EXPECT_EQ(big.entry, "gemm_tma");
    // Persistent by default: one block per SM, each two consumer warpgroups and a producer; four
    // stages and their eight mbarriers; C stored through two 8 KiB staging buffers a consumer.
    EXPECT_EQ(big.launch.global[0], 132);
    EXPECT_EQ(big.launch.local[0], 384);
    EXPECT_EQ(big.launch.shared_memory_bytes, 4 * (128 + 256) * 128 + 1024 + 8 * 8 + 2 * 2 * 64 * 128);
    ASSERT_EQ(big.tensor_maps.size(), 3u);
    const auto& a = big.tensor_maps[0];
    const auto& b = big.tensor_maps[1];
    EXPECT_EQ(a.buffer, 0u);
    EXPECT_EQ(a.dims, (std::vector<std::uint64_t>{4096, 4096}));
    EXPECT_EQ(a.strides_bytes, (std::vector<std::uint64_t>{8192}));
    EXPECT_EQ(a.box, (std::vector<std::uint32_t>{64, 128}));  // 64 k of the block's 128 rows
    EXPECT_EQ(b.buffer, 1u);
    EXPECT_EQ(b.box, (std::vector<std::uint32_t>{64, 64}));   // 64 n of a 64-deep slice
    EXPECT_EQ(a.data_type, backends::cuda::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
    EXPECT_EQ(backends::cuda::read_cuda_artifact(results[3].artifact).tensor_maps[0].data_type,
              backends::cuda::CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
    // The edge shape (200 x 136) has 4 tiles of 128 x 256 at most: never persistent.
    const auto edge = backends::cuda::read_cuda_artifact(results[0].artifact);
    EXPECT_EQ(edge.tensor_maps[0].dims, (std::vector<std::uint64_t>{72, 200}));

    // Short M: the default falls back from persistent 128 x 256 tiles (43 of them here) to one
    // warpgroup of 128 x 128; split-K launches a cluster of blocks per tile, each with room for
    // the tile's float sums and its hand-over barriers.
    auto short_m = template_task(hopper, "128,11008,4096", "bf16", h100);
    EXPECT_EQ(short_m->space.to_json(hopper.default_config(short_m->workload, h100, short_m->space)),
              (nlohmann::json{{"bn", 128}, {"mi", 2}, {"wgs", 1}, {"stages", 6}, {"group_m", 1}, {"persistent", 0},
                              {"split_k", 1}, {"cluster_m", 1}, {"pingpong", 0}, {"tma_store", 1}, {"stream_k", 0}}));
    const nlohmann::json split = {{"bn", 128}, {"mi", 1}, {"wgs", 2}, {"stages", 4}, {"group_m", 1}, {"persistent", 0},
                                  {"split_k", 2}, {"cluster_m", 1}, {"pingpong", 0}};
    ASSERT_TRUE(short_m->space.is_valid(short_m->space.from_json(split)));
    const auto split_results = builder->build({{short_m, short_m->space.from_json(split)}});
    ASSERT_TRUE(split_results[0].ok()) << split_results[0].message;
    const CudaArtifact split_artifact = backends::cuda::read_cuda_artifact(split_results[0].artifact);
    EXPECT_EQ(split_artifact.launch.global[0], 86 * 2);
    EXPECT_EQ(split_artifact.launch.shared_memory_bytes, 4 * (128 + 128) * 128 + 1024 + 8 * 8 + 128 * 128 * 4 + 4 * 8);
    // Stream-K: 43 tiles of 128 x 256 by 64 slices each, shared by a block per SM (132), which
    // the kernel knows at compile time (its workspace's size); never with a cluster or a
    // persistent walk, nor where the tiles fill the SMs evenly.
    nlohmann::json streamed = split;
    streamed.update({{"bn", 256}, {"split_k", 1}, {"tma_store", 1}, {"stream_k", 1}});
    ASSERT_TRUE(short_m->space.is_valid(short_m->space.from_json(streamed)));
    const auto streamed_results = builder->build({{short_m, short_m->space.from_json(streamed)}});
    ASSERT_TRUE(streamed_results[0].ok()) << streamed_results[0].message;
    const CudaArtifact streamed_artifact = backends::cuda::read_cuda_artifact(streamed_results[0].artifact);
    EXPECT_EQ(streamed_artifact.launch.global[0], 132);
    const std::string module(streamed_artifact.module.begin(), streamed_artifact.module.end());
    EXPECT_NE(module.find("stream_k_partials"), std::string::npos);  // the workspace, a module global
    EXPECT_NE(module.find("stream_k_arrivals"), std::string::npos);  // each shared tile's parts counted
    // Beyond the stages, barriers and staging buffers: a word per consumer warpgroup, where the
    // thread that counts a part tells the others whether it was the tile's last.
    EXPECT_EQ(streamed_artifact.launch.shared_memory_bytes,
              4 * (128 + 256) * 128 + 1024 + 8 * 8 + 2 * (2 * 64 * 128) + 2 * 8);
    // 192 columns (wgmma's n192; three slabs of B): 2 x 58 tiles at M = 256 fill 116 of 132 SMs,
    // where 128 x 256 tiles fill 86; B multicast in thirds of 64 columns, and as fp8's K-major rows.
    auto short_256 = template_task(hopper, "256,11008,4096", "bf16", h100);
    nlohmann::json wide = split;
    wide.update({{"bn", 192}, {"split_k", 1}, {"tma_store", 1}});
    nlohmann::json wide_pair = wide;
    wide_pair["cluster_m"] = 2;
    auto fp8_task = template_task(hopper, "256,11008,4096", "e4m3", h100);
    nlohmann::json wide_fp8 = wide_pair;
    wide_fp8["promote_every"] = 0;
    const auto wide_results = builder->build({{short_256, short_256->space.from_json(wide)},
                                              {short_256, short_256->space.from_json(wide_pair)},
                                              {fp8_task, fp8_task->space.from_json(wide_fp8)}});
    for (const auto& result : wide_results) ASSERT_TRUE(result.ok()) << result.message;
    EXPECT_EQ(backends::cuda::read_cuda_artifact(wide_results[0].artifact).launch.global[0], 2 * 58);
    EXPECT_EQ(backends::cuda::read_cuda_artifact(wide_results[2].artifact).tensor_maps[1].box,
              (std::vector<std::uint32_t>{128, 96}));  // a 128-byte row of k by each block's 96 rows of n
    wide["mi"] = 2;  // 192 accumulators a thread
    EXPECT_FALSE(short_256->space.is_valid(short_256->space.from_json(wide)));
    for (const auto& [knob, value] : {std::pair{"persistent", 1}, {"cluster_m", 2}, {"split_k", 2}}) {
      nlohmann::json refused = streamed;
      refused[knob] = value;
      EXPECT_FALSE(short_m->space.is_valid(short_m->space.from_json(refused))) << knob;
    }
    auto even = template_task(hopper, "4224,4096,4096", "bf16", h100);  // 33 x 16 tiles of 128 x 256: 4 a SM
    EXPECT_FALSE(even->space.is_valid(even->space.from_json(streamed)));
    auto uneven = template_task(hopper, "4096,4096,4096", "bf16", h100);  // 512 tiles
    EXPECT_TRUE(uneven->space.is_valid(uneven->space.from_json(streamed)));
    // Multicast pairs: 4096^3 in clusters of two 128 x 256 tiles, persistent: 66 clusters of 2 blocks.
    auto square = template_task(hopper, "4096,4096,4096", "bf16", h100);
    const nlohmann::json pair = {{"bn", 256}, {"mi", 1}, {"wgs", 2}, {"stages", 4}, {"group_m", 8}, {"persistent", 1},
                                 {"split_k", 1}, {"cluster_m", 2}, {"pingpong", 0}};
    const auto pair_results = builder->build({{square, square->space.from_json(pair)}});
    ASSERT_TRUE(pair_results[0].ok()) << pair_results[0].message;
    EXPECT_EQ(backends::cuda::read_cuda_artifact(pair_results[0].artifact).launch.global[0], 132);
    // Ping-pong: each consumer has 64 x 256 tiles of its own; the ring holds 64 rows of A a stage.
    nlohmann::json turns = pair;
    turns["cluster_m"] = 1;
    turns["pingpong"] = 1;
    const auto turn_results = builder->build({{square, square->space.from_json(turns)}});
    ASSERT_TRUE(turn_results[0].ok()) << turn_results[0].message;
    const CudaArtifact turn_artifact = backends::cuda::read_cuda_artifact(turn_results[0].artifact);
    EXPECT_EQ(turn_artifact.launch.shared_memory_bytes, 4 * (64 + 256) * 128 + 1024 + 8 * 8 + 2 * 8);
    EXPECT_EQ(turn_artifact.tensor_maps[0].box, (std::vector<std::uint32_t>{64, 64}));
    // TMA stores: a third tensor map, of C (argument 2) in 64 x 64 pieces, and two 8 KiB staging
    // buffers per consumer; a record from before the knob reads it as 0.
    nlohmann::json stored = pair;
    stored["cluster_m"] = 1;
    stored["tma_store"] = 1;
    const auto stored_results = builder->build({{square, square->space.from_json(stored)}});
    ASSERT_TRUE(stored_results[0].ok()) << stored_results[0].message;
    const CudaArtifact stored_artifact = backends::cuda::read_cuda_artifact(stored_results[0].artifact);
    EXPECT_EQ(stored_artifact.launch.shared_memory_bytes, 4 * (128 + 256) * 128 + 1024 + 8 * 8 + 2 * 2 * 64 * 128);
    ASSERT_EQ(stored_artifact.tensor_maps.size(), 3u);
    EXPECT_EQ(stored_artifact.tensor_maps[2].buffer, 2u);
    EXPECT_EQ(stored_artifact.tensor_maps[2].dims, (std::vector<std::uint64_t>{4096, 4096}));
    EXPECT_EQ(stored_artifact.tensor_maps[2].box, (std::vector<std::uint32_t>{64, 64}));
    EXPECT_EQ(square->space.to_json(square->space.from_json(pair))["tma_store"], 0);
    turns["wgs"] = 1;
    EXPECT_FALSE(square->space.is_valid(square->space.from_json(turns)));
    nlohmann::json split_and_pair = split;
    split_and_pair["cluster_m"] = 2;
    EXPECT_FALSE(short_m->space.is_valid(short_m->space.from_json(split_and_pair)));
    // Split-K needs two 64-deep slices per part: K = 192 has three.
    auto shallow = template_task(hopper, "128,11008,192", "bf16", h100);
    EXPECT_FALSE(shallow->space.is_valid(shallow->space.from_json(split)));
  }
}

// Compile once, run many: group_m is the kernels' last argument and persistent only the launch's
// grid, so configs that differ in them alone share one compile, in one batch as across batches,
// each with its own launch and run-time arguments; a config that differs in a compiled knob compiles.
TEST(CudaGemmTemplate, ConfigsThatDifferOnlyInRunTimeKnobsShareOneCompile) {
  if (!backends::cuda::NvrtcApi::get().is_available()) GTEST_SKIP() << "no NVRTC here";
  const kernels::DeviceInfo h100 = paper_h100();
  auto builder = source_tree_builder();
  for (const char* name : {"gemm_tma.cuda", "gemm.cuda"}) {
    SCOPED_TRACE(name);
    const auto& gemm = backends::find_template(name);
    const auto run_time = gemm.run_time_knobs();
    EXPECT_EQ(run_time.front(), "group_m");
    auto task = template_task(gemm, "4096,4096,4096", "bf16", h100);
    const search_space::Config base = gemm.default_config(task->workload, h100, task->space);
    nlohmann::json banded = task->space.to_json(base), walked = banded, staged = banded;
    ASSERT_EQ(banded["group_m"], 8);
    walked["group_m"] = 1;
    const bool persistent = std::string(name) == "gemm_tma.cuda";
    if (persistent) walked["persistent"] = 0;
    staged["stages"] = 3;
    std::vector<measure::MeasureInput> inputs;
    for (const auto& config : {banded, walked, staged}) {
      ASSERT_TRUE(task->space.is_valid(task->space.from_json(config))) << config;
      inputs.push_back({task, task->space.from_json(config)});
    }
    const auto results = builder->build(inputs);
    std::vector<CudaArtifact> built;
    for (const auto& result : results) {
      ASSERT_TRUE(result.ok()) << result.message;
      built.push_back(backends::cuda::read_cuda_artifact(result.artifact));
    }
    EXPECT_FALSE(built[0].from_cache);
    EXPECT_GT(results[0].build_seconds, 0);
    EXPECT_TRUE(built[1].from_cache);  // the first one's compile
    EXPECT_EQ(results[1].build_seconds, 0);
    EXPECT_EQ(built[1].module, built[0].module);
    EXPECT_FALSE(built[2].from_cache);  // three stages: another program
    EXPECT_NE(built[2].module, built[0].module);
    EXPECT_EQ(built[0].run_time_arguments, (std::vector<std::int32_t>{8}));
    EXPECT_EQ(built[1].run_time_arguments, (std::vector<std::int32_t>{1}));
    if (persistent) {
      EXPECT_EQ(built[0].launch.global[0], 132);  // a block per SM
      EXPECT_EQ(built[1].launch.global[0], 512);  // a block per 128 x 256 tile
    }
    // What people read of a candidate names its run-time arguments.
    EXPECT_NE(gemm.emit_source(task->workload, h100, search_space::ConfigView(task->space, inputs[1].config))
                  .find("run-time arguments after the tensor maps: 1\n"),
              std::string::npos);
  }
}

// fp8 GEMM (e4m3 in, bf16 out, two scales): only gemm_tma.cuda runs it; its candidates compile
// with float32 promotion (every slice, every 4) and with the tensor cores' own sums, multicast too; B's tensor map reads
// rows of K (B given N x K); promotion's doubled registers keep 128 x 256 tiles out; K must come
// in multiples of 16.
TEST(CudaGemmTemplate, Fp8CandidatesCompileWithBByRowsOfKAndPromotionsRegisters) {
  const kernels::DeviceInfo h100 = paper_h100();
  const auto& hopper = backends::find_template("gemm_tma.cuda");
  kernels::Workload workload = kernels::parse_workload(kernels::Op::kGemm, "256,512,4096,dtype=e4m3");
  EXPECT_EQ(backends::default_template(workload, "cuda", h100).name(), "gemm_tma.cuda");
  EXPECT_FALSE(hopper.applies(kernels::parse_workload(kernels::Op::kGemm, "256,512,4104,dtype=e4m3"), h100));
  auto task = template_task(hopper, "4096,4096,4096", "e4m3", h100);
  const nlohmann::json wide = {{"bn", 256}, {"mi", 1}, {"wgs", 2}, {"stages", 4}, {"group_m", 8}, {"persistent", 1},
                               {"split_k", 1}, {"cluster_m", 1}, {"pingpong", 0}, {"promote_every", 0}};
  EXPECT_TRUE(task->space.is_valid(task->space.from_json(wide)));
  nlohmann::json promoted_wide = wide;
  promoted_wide["promote_every"] = 2;
  EXPECT_FALSE(task->space.is_valid(task->space.from_json(promoted_wide)));
  nlohmann::json pair = wide;
  pair["bn"] = 128;
  pair["cluster_m"] = 2;
  pair["promote_every"] = 4;
  pair["tma_store"] = 1;
  if (!backends::cuda::NvrtcApi::get().is_available()) GTEST_SKIP() << "no NVRTC here";
  auto builder = source_tree_builder();
  auto edge = template_task(hopper, "200,136,96", "e4m3", h100);
  const auto results = builder->build({{task, hopper.default_config(task->workload, h100, task->space)},
                                       {task, task->space.from_json(wide)},
                                       {task, task->space.from_json(pair)},
                                       {edge, hopper.default_config(edge->workload, h100, edge->space)}});
  for (const auto& result : results) ASSERT_TRUE(result.ok()) << result.message;
  const auto default_config = hopper.default_config(task->workload, h100, task->space);
  const std::string source =
      hopper.emit_source(task->workload, h100, search_space::ConfigView(task->space, default_config));
  EXPECT_NE(source.find("-DOPTUNE_E4M3"), std::string::npos) << source;
  EXPECT_NE(source.find("-DPROMOTE_EVERY=2"), std::string::npos) << source;  // 256 deep in the tensor cores
  const CudaArtifact promoted = backends::cuda::read_cuda_artifact(results[0].artifact);
  // 128 x 128 tiles, five stages of a 128-byte row of k for 128 rows of A and 128 of B; TMA stores.
  EXPECT_EQ(promoted.launch.shared_memory_bytes, 5 * (128 + 128) * 128 + 1024 + 2 * 5 * 8 + 2 * 2 * 64 * 128);
  ASSERT_EQ(promoted.tensor_maps.size(), 3u);
  const auto& a = promoted.tensor_maps[0];
  const auto& b = promoted.tensor_maps[1];
  EXPECT_EQ(a.data_type, backends::cuda::CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(a.strides_bytes, (std::vector<std::uint64_t>{4096}));
  EXPECT_EQ(a.box, (std::vector<std::uint32_t>{128, 128}));
  EXPECT_EQ(b.dims, (std::vector<std::uint64_t>{4096, 4096}));  // K, then N rows
  EXPECT_EQ(b.box, (std::vector<std::uint32_t>{128, 128}));     // 128 k of the block's 128 columns
  // A multicast pair copies half of B's rows each; its TMA stores write bf16 C, argument 4.
  const CudaArtifact paired = backends::cuda::read_cuda_artifact(results[2].artifact);
  EXPECT_EQ(paired.tensor_maps[1].box, (std::vector<std::uint32_t>{128, 64}));
  ASSERT_EQ(paired.tensor_maps.size(), 3u);
  EXPECT_EQ(paired.tensor_maps[2].buffer, 4u);
  EXPECT_EQ(paired.tensor_maps[2].data_type, backends::cuda::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(backends::cuda::read_cuda_artifact(results[3].artifact).tensor_maps[1].dims,
            (std::vector<std::uint64_t>{96, 136}));
}

// float32 GEMM on Hopper: gemm_3xtf32.cuda is the default there (no other CUDA template takes
// f32); its candidates compile, at an edge shape too; A's tensor map is swizzled rows of 32 k,
// B's unswizzled rows of the block's columns and 8 floats of padding; the tensor cores' sums are
// always promoted (float32's accuracy), and tiles whose accumulators or padded B rows do not fit
// are refused; K or N off a multiple of 4, or a device before Hopper, is not the template's.
TEST(CudaGemmTemplate, Float32OnCudaCoresIsTheDefaultBeforeHopperAndItsCandidatesCompile) {
  const kernels::DeviceInfo h100 = paper_h100();
  kernels::DeviceInfo a100 = h100;
  a100.isa = {"sm_80"};
  const auto& ffma = backends::find_template("gemm_ffma.cuda");
  const kernels::Workload workload = kernels::parse_workload(kernels::Op::kGemm, "512,384,256");
  // 3xTF32 stays the default where it applies; before Hopper FP32 FMA is the f32 template.
  EXPECT_EQ(backends::default_template(workload, "cuda", h100).name(), "gemm_3xtf32.cuda");
  EXPECT_EQ(backends::default_template(workload, "cuda", a100).name(), "gemm_ffma.cuda");
  EXPECT_FALSE(ffma.applies(kernels::parse_workload(kernels::Op::kGemm, "512,384,258"), a100));
  kernels::DeviceInfo v100 = h100;
  v100.isa = {"sm_70"};
  EXPECT_FALSE(ffma.applies(workload, v100));  // cp.async

  auto task = template_task(ffma, "4096,4096,4096", "f32", a100);
  EXPECT_EQ(task->space.to_json(ffma.default_config(task->workload, a100, task->space)),
            (nlohmann::json{{"bm", 128}, {"bn", 128}, {"bk", 16}, {"tm", 8}, {"tn", 8}, {"stages", 3}, {"group_m", 8}}));
  const nlohmann::json narrow = {{"bm", 64}, {"bn", 128}, {"bk", 32}, {"tm", 4}, {"tn", 8}, {"stages", 4}, {"group_m", 1}};
  EXPECT_TRUE(task->space.is_valid(task->space.from_json(narrow)));
  nlohmann::json crowded = narrow;
  crowded.update({{"bm", 256}, {"tm", 8}});  // 512 threads of 152 registers: past an SM's 65,536
  EXPECT_FALSE(task->space.is_valid(task->space.from_json(crowded)));
  nlohmann::json few = narrow;
  few.update({{"bm", 32}, {"bn", 32}, {"tm", 8}});  // 16 threads
  EXPECT_FALSE(task->space.is_valid(task->space.from_json(few)));
  if (!backends::cuda::NvrtcApi::get().is_available()) GTEST_SKIP() << "no NVRTC here";
  auto builder = source_tree_builder();
  auto edge = template_task(ffma, "100,36,20", "f32", a100);  // edges in every dimension
  const auto results = builder->build({{task, ffma.default_config(task->workload, a100, task->space)},
                                       {task, task->space.from_json(narrow)},
                                       {edge, ffma.default_config(edge->workload, a100, edge->space)}});
  for (const auto& result : results) ASSERT_TRUE(result.ok()) << result.message;
  const CudaArtifact big = backends::cuda::read_cuda_artifact(results[0].artifact);
  EXPECT_EQ(big.entry, "gemm_ffma");
  EXPECT_EQ(big.arch, "sm_80");
  EXPECT_EQ(big.launch.global[0], 32 * 32);
  EXPECT_EQ(big.launch.local[0], 256);
  EXPECT_EQ(big.launch.shared_memory_bytes, 3 * (128 * (16 + 4) + 16 * 128) * 4);  // A's rows padded by 4 floats
  EXPECT_TRUE(big.tensor_maps.empty());
  const CudaArtifact small = backends::cuda::read_cuda_artifact(results[2].artifact);
  EXPECT_EQ(small.launch.global[0], 2 * 1);  // 64 x 64 tiles: 100 x 36 needs two
  EXPECT_EQ(small.launch.local[0], 256);
}

TEST(CudaGemmTemplate, Float32On3xTf32CandidatesCompileWithTheirTensorMaps) {
  const kernels::DeviceInfo h100 = paper_h100();
  const auto& tf32 = backends::find_template("gemm_3xtf32.cuda");
  const kernels::Workload workload = kernels::parse_workload(kernels::Op::kGemm, "512,384,256");
  EXPECT_EQ(backends::default_template(workload, "cuda", h100).name(), "gemm_3xtf32.cuda");
  EXPECT_FALSE(tf32.applies(kernels::parse_workload(kernels::Op::kGemm, "512,384,258"), h100));
  EXPECT_FALSE(tf32.applies(kernels::parse_workload(kernels::Op::kGemm, "512,386,256"), h100));
  kernels::DeviceInfo a100 = h100;
  a100.isa = {"sm_80"};
  EXPECT_FALSE(tf32.applies(workload, a100));
  auto task = template_task(tf32, "4096,4096,4096", "f32", h100);
  const nlohmann::json wide = {{"bm", 64}, {"mi", 2}, {"wgs", 1}, {"stages", 6}, {"group_m", 8},
                               {"persistent", 1}, {"promote_every", 4}};
  EXPECT_TRUE(task->space.is_valid(task->space.from_json(wide)));
  nlohmann::json unpromoted = wide;
  unpromoted["promote_every"] = 0;  // never all of K in the tensor cores: 1, 2 or 4 slices
  EXPECT_THROW(task->space.from_json(unpromoted), std::invalid_argument);
  EXPECT_EQ(task->space.option_count(task->space.knob_index("promote_every")), 3u);
  nlohmann::json crowded = wide;
  crowded["bm"] = 128;  // 2 x 128 accumulators a thread
  EXPECT_FALSE(task->space.is_valid(task->space.from_json(crowded)));
  nlohmann::json too_wide = wide;
  too_wide["wgs"] = 2;  // 256 columns: B's padded rows exceed a TMA box
  EXPECT_FALSE(task->space.is_valid(task->space.from_json(too_wide)));
  if (!backends::cuda::NvrtcApi::get().is_available()) GTEST_SKIP() << "no NVRTC here";
  auto builder = source_tree_builder();
  auto edge = template_task(tf32, "200,136,72", "f32", h100);
  const auto results = builder->build({{task, tf32.default_config(task->workload, h100, task->space)},
                                       {task, task->space.from_json(wide)},
                                       {edge, tf32.default_config(edge->workload, h100, edge->space)}});
  for (const auto& result : results) ASSERT_TRUE(result.ok()) << result.message;
  const CudaArtifact big = backends::cuda::read_cuda_artifact(results[0].artifact);
  EXPECT_EQ(big.entry, "gemm_3xtf32");
  // 128 x 128 tiles, a block each of two consumers and a producer; four stages of A's two parts
  // (128 rows of 128 bytes each) and B's 32 rows of 136 floats, three mbarriers each.
  EXPECT_EQ(big.launch.global[0], 32 * 32);
  EXPECT_EQ(big.launch.local[0], 384);
  EXPECT_EQ(big.launch.shared_memory_bytes, 4 * (2 * 128 * 128 + 32 * 136 * 4) + 1024 + 3 * 4 * 8);
  ASSERT_EQ(big.tensor_maps.size(), 2u);
  const auto& a = big.tensor_maps[0];
  const auto& b = big.tensor_maps[1];
  EXPECT_EQ(a.data_type, backends::cuda::CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(a.strides_bytes, (std::vector<std::uint64_t>{4096 * 4}));
  EXPECT_EQ(a.box, (std::vector<std::uint32_t>{32, 128}));
  EXPECT_EQ(a.swizzle, backends::cuda::CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(b.box, (std::vector<std::uint32_t>{136, 32}));
  EXPECT_EQ(b.swizzle, backends::cuda::CU_TENSOR_MAP_SWIZZLE_NONE);
  // The edge shape: 2 x 2 tiles of 128 x 128, not persistent; B's map is N wide, K deep.
  const CudaArtifact edge_artifact = backends::cuda::read_cuda_artifact(results[2].artifact);
  EXPECT_EQ(edge_artifact.launch.global[0], 4);
  EXPECT_EQ(edge_artifact.tensor_maps[1].dims, (std::vector<std::uint64_t>{136, 72}));
}

TEST(CudaConv2dTemplate, ImplicitGemmCandidatesCompileWithAnIm2colViewOfTheInput) {
  const kernels::DeviceInfo h100 = paper_h100();
  const auto& conv = backends::find_template("conv2d_tma.cuda");
  const char* layer = "N=2,C=64,H=14,W=14,K=128,R=3,S=3,stride=1,pad=1,layout=nhwc";
  kernels::Workload workload = kernels::parse_workload(kernels::Op::kConv2d, layer);
  workload.dtype = kernels::DataType::kBF16;
  EXPECT_EQ(backends::default_template(workload, "cuda", h100).name(), "conv2d_tma.cuda");
  auto refused = [&](const char* shape) {
    kernels::Workload other = kernels::parse_workload(kernels::Op::kConv2d, shape);
    other.dtype = kernels::DataType::kBF16;
    return !conv.applies(other, h100);
  };
  EXPECT_TRUE(refused("N=2,C=64,H=14,W=14,K=128,R=3,S=3,pad=1"));                 // NCHW
  EXPECT_TRUE(refused("N=2,C=12,H=14,W=14,K=128,R=3,S=3,pad=1,layout=nhwc"));      // 24-byte pixels
  EXPECT_TRUE(refused("N=2,C=64,H=14,W=14,K=20,R=3,S=3,pad=1,layout=nhwc"));       // 40-byte filter rows
  EXPECT_TRUE(refused("N=1,C=64,H=64,W=64,K=64,R=3,S=3,stride=9,pad=1,layout=nhwc"));  // past TMA's strides
  kernels::DeviceInfo a100 = h100;
  a100.isa = {"sm_80"};
  EXPECT_FALSE(conv.applies(workload, a100));

  auto task = template_task(conv, layer, "bf16", h100);
  // K of the implicit GEMM: 9 taps of one 64-channel slice each, so split-K 4 still has two slices a part.
  const nlohmann::json split = {{"bn", 128}, {"mi", 1}, {"wgs", 1}, {"stages", 4}, {"group_m", 1},
                                {"persistent", 0}, {"split_k", 4}, {"cluster_m", 1}, {"pingpong", 0}};
  EXPECT_TRUE(task->space.is_valid(task->space.from_json(split)));
  const nlohmann::json pair = {{"bn", 64}, {"mi", 1}, {"wgs", 2}, {"stages", 5}, {"group_m", 8},
                               {"persistent", 0}, {"split_k", 1}, {"cluster_m", 2}, {"pingpong", 0}, {"tma_store", 1}};
  ASSERT_TRUE(task->space.is_valid(task->space.from_json(pair)));
  if (!backends::cuda::NvrtcApi::get().is_available()) GTEST_SKIP() << "no NVRTC here";
  // A strided, dilated layer whose channels fill no whole slice, in f16.
  auto edge = template_task(conv, "N=3,C=40,H=17,W=15,K=24,R=3,S=5,stride=2,pad=2,dilation=2,layout=nhwc", "f16", h100);
  auto builder = source_tree_builder();
  const auto results = builder->build({{task, conv.default_config(task->workload, h100, task->space)},
                                       {task, task->space.from_json(split)},
                                       {task, task->space.from_json(pair)},
                                       {edge, conv.default_config(edge->workload, h100, edge->space)}});
  for (const auto& result : results) ASSERT_TRUE(result.ok()) << result.message;
  const CudaArtifact paired = backends::cuda::read_cuda_artifact(results[2].artifact);
  EXPECT_EQ(paired.entry, "gemm_tma");
  ASSERT_EQ(paired.tensor_maps.size(), 3u);  // and the NHWC output's, 392 x 128, for TMA stores
  EXPECT_EQ(paired.tensor_maps[2].dims, (std::vector<std::uint64_t>{128, 392}));
  // A: the NHWC input as C, W, H, N; a copy of the block's 128 pixels by 64 channels, the window
  // from -1 to 1 - 2 around each.
  const auto& a = paired.tensor_maps[0];
  EXPECT_EQ(a.buffer, 0u);
  EXPECT_EQ(a.dims, (std::vector<std::uint64_t>{64, 14, 14, 2}));
  EXPECT_EQ(a.strides_bytes, (std::vector<std::uint64_t>{64 * 2, 14 * 64 * 2, 14 * 14 * 64 * 2}));
  ASSERT_TRUE(a.im2col.has_value());
  EXPECT_EQ(a.im2col->lower_corner, (std::vector<int>{-1, -1}));
  EXPECT_EQ(a.im2col->upper_corner, (std::vector<int>{-1, -1}));
  EXPECT_EQ(a.im2col->channels_per_pixel, 64u);
  EXPECT_EQ(a.im2col->pixels_per_column, 128u);
  EXPECT_EQ(a.element_strides, (std::vector<std::uint32_t>{1, 1, 1, 1}));
  // B: the K x (R S C) filter, a copy of a slice's 64 columns by each block's half of 64 rows.
  const auto& b = paired.tensor_maps[1];
  EXPECT_EQ(b.dims, (std::vector<std::uint64_t>{9 * 64, 128}));
  EXPECT_EQ(b.box, (std::vector<std::uint32_t>{64, 32}));
  EXPECT_FALSE(b.im2col.has_value());
  // 392 output pixels by 128 channels: 2 x 2 tiles of 256 x 64, a pair of blocks each.
  EXPECT_EQ(paired.launch.global[0], 2 * 2 * 2);
  // The edge layer: W's window from -2 to 2 - 8, H's to 2 - 4, traversed two pixels a step.
  const CudaArtifact strided = backends::cuda::read_cuda_artifact(results[3].artifact);
  EXPECT_EQ(strided.tensor_maps[0].im2col->lower_corner, (std::vector<int>{-2, -2}));
  EXPECT_EQ(strided.tensor_maps[0].im2col->upper_corner, (std::vector<int>{-6, -2}));
  EXPECT_EQ(strided.tensor_maps[0].element_strides, (std::vector<std::uint32_t>{1, 2, 2, 1}));
  EXPECT_EQ(strided.tensor_maps[1].dims, (std::vector<std::uint64_t>{15 * 40, 24}));

  // A pointwise layer (1 x 1, stride 1, no padding) is a GEMM of the NHWC input's rows: A's map is
  // tiled (the (N H W) x C matrix, 72 channels, so a second slice half past them), not im2col; a
  // strided 1 x 1 layer keeps the im2col view.
  auto pointwise = template_task(conv, "N=2,C=72,H=7,W=9,K=40,R=1,S=1,layout=nhwc", "bf16", h100);
  auto strided_pointwise = template_task(conv, "N=2,C=72,H=7,W=9,K=40,R=1,S=1,stride=2,layout=nhwc", "bf16", h100);
  const auto pointwise_results =
      builder->build({{pointwise, conv.default_config(pointwise->workload, h100, pointwise->space)},
                      {strided_pointwise, conv.default_config(strided_pointwise->workload, h100, strided_pointwise->space)}});
  for (const auto& result : pointwise_results) ASSERT_TRUE(result.ok()) << result.message;
  const auto pointwise_a = backends::cuda::read_cuda_artifact(pointwise_results[0].artifact).tensor_maps[0];
  EXPECT_FALSE(pointwise_a.im2col.has_value());
  EXPECT_EQ(pointwise_a.dims, (std::vector<std::uint64_t>{72, 2 * 7 * 9}));
  EXPECT_EQ(pointwise_a.box, (std::vector<std::uint32_t>{64, 128}));  // a slice's 64 channels by the block's 128 pixels
  EXPECT_TRUE(backends::cuda::read_cuda_artifact(pointwise_results[1].artifact).tensor_maps[0].im2col.has_value());
}

TEST(CudaArtifact, DamagedFilesAreRefusedNamingTheFile) {
  const fs::path path = fs::temp_directory_path() / ("optune_cuda_artifact_" + std::to_string(::getpid()));
  CudaArtifact artifact;
  artifact.template_name = "kernel.k.cuda#00000000";
  artifact.workload_key = "kernel.k.N4";
  artifact.arch = "sm_90a";
  artifact.entry = "k";
  artifact.launch.global = {4, 1, 1};
  artifact.launch.local = {32, 1, 1};
  artifact.module = {'\x7f', 'E', 'L', 'F', '\0', '\n', '\1'};
  backends::cuda::write_cuda_artifact(artifact, path.string());
  const CudaArtifact back = backends::cuda::read_cuda_artifact(path.string());
  EXPECT_EQ(back.module, artifact.module);
  EXPECT_EQ(back.launch, artifact.launch);
  // Cut short by a byte, and with a grid of no blocks.
  std::string text;
  {
    std::ifstream in(path, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  write(path, text.substr(0, text.size() - 1));
  EXPECT_THROW(backends::cuda::read_cuda_artifact(path.string()), std::runtime_error);
  // A tensor map with a box side past the TMA's 256.
  {
    CudaArtifact with_map = artifact;
    backends::cuda::TensorMapArgument map;
    map.dims = {64, 64};
    map.strides_bytes = {128};
    map.box = {64, 64};
    with_map.tensor_maps = {map};
    backends::cuda::write_cuda_artifact(with_map, path.string());
    EXPECT_EQ(backends::cuda::read_cuda_artifact(path.string()).tensor_maps[0].box, map.box);
    with_map.tensor_maps[0].box = {64, 512};
    backends::cuda::write_cuda_artifact(with_map, path.string());
    EXPECT_THROW(backends::cuda::read_cuda_artifact(path.string()), std::runtime_error);
    // An im2col view reads back whole; one whose corner is past the copy's [-128, 127] does not.
    with_map.tensor_maps = {backends::cuda::im2col_map(0, kernels::DataType::kBF16, 2, 9, 9, 64, 3, 3, 2, 1, 1, 128, 64)};
    backends::cuda::write_cuda_artifact(with_map, path.string());
    const auto im2col = backends::cuda::read_cuda_artifact(path.string()).tensor_maps[0];
    EXPECT_EQ(im2col.im2col->upper_corner, (std::vector<int>{-1, -1}));
    EXPECT_EQ(im2col.element_strides, (std::vector<std::uint32_t>{1, 2, 2, 1}));
    with_map.tensor_maps[0].im2col->lower_corner = {-200, -1};
    backends::cuda::write_cuda_artifact(with_map, path.string());
    EXPECT_THROW(backends::cuda::read_cuda_artifact(path.string()), std::runtime_error);
  }
  // Run-time arguments read back; a value that is no 32-bit integer is refused.
  {
    CudaArtifact with_knobs = artifact;
    with_knobs.run_time_arguments = {8, -1};
    backends::cuda::write_cuda_artifact(with_knobs, path.string());
    EXPECT_EQ(backends::cuda::read_cuda_artifact(path.string()).run_time_arguments, (std::vector<std::int32_t>{8, -1}));
    std::string knob_text;
    {
      std::ifstream in(path, std::ios::binary);
      knob_text.assign(std::istreambuf_iterator<char>(in), {});
    }
    knob_text.replace(knob_text.find("[8,-1]"), 6, "[8,4294967296]");
    write(path, knob_text);
    EXPECT_THROW(backends::cuda::read_cuda_artifact(path.string()), std::runtime_error);
  }
  std::string zero_grid = text;
  zero_grid.replace(zero_grid.find("\"grid\":[4,1,1]"), 14, "\"grid\":[0,1,1]");
  write(path, zero_grid);
  try {
    backends::cuda::read_cuda_artifact(path.string());
    ADD_FAILURE() << "a grid of no blocks";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(path.string()), std::string::npos) << error.what();
  }
  fs::remove(path);
}

}  // namespace
