// compile_cuda and optune-nvrtc on a machine with NVRTC and no GPU: what the driver would load
// (an sm_90a ELF, PTX for compute_XX), templated entries' lowered names, compile errors as
// results, and the architecture chosen for a compute capability.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <cstdio>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "compile.hpp"
#include "nvrtc_api.hpp"
#include "probe_kernels.hpp"
#include "child_process.hpp"

namespace {

namespace fs = std::filesystem;
using namespace optune::backends::cuda;

constexpr const char* kVectorAdd = R"(
__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
)";

constexpr const char* kTemplated = R"(
template <typename T, int TILE>
__global__ void scale(T* x, T factor) {
  __shared__ T tile[TILE];
  tile[threadIdx.x] = x[blockIdx.x * TILE + threadIdx.x] * factor;
  __syncthreads();
  x[blockIdx.x * TILE + threadIdx.x] = tile[TILE - 1 - threadIdx.x];
}
)";

constexpr int kEmCuda = 190;  // ELF e_machine of NVIDIA GPU code

class NvrtcCompile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!NvrtcApi::get().is_available()) GTEST_SKIP() << NvrtcApi::get().missing;
  }
};

CompileRequest request_for(const char* source, const std::string& arch) {
  CompileRequest request;
  request.source = source;
  request.arch = arch;
  return request;
}

TEST_F(NvrtcCompile, VectorAddForSm90aIsACudaElf) {
  CompileRequest request = request_for(kVectorAdd, "sm_90a");
  request.name_expressions = {"&vector_add"};
  const CompileResult result = compile_cuda(request);
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_FALSE(result.is_ptx);
  ASSERT_GT(result.binary.size(), 20u);
  EXPECT_EQ(std::memcmp(result.binary.data(), "\x7f" "ELF", 4), 0);
  std::uint16_t machine = 0;
  std::memcpy(&machine, result.binary.data() + 18, sizeof machine);  // e_machine, little-endian
  EXPECT_EQ(machine, kEmCuda);
  EXPECT_EQ(result.lowered_names.at("&vector_add"), "_Z10vector_addPKfS0_Pfi");
  EXPECT_GT(result.seconds, 0.0);
}

TEST_F(NvrtcCompile, TemplatedEntryGetsAMangledLoweredName) {
  CompileRequest request = request_for(kTemplated, "sm_90a");
  request.name_expressions = {"&scale<float, 16>", "&scale<double, 32>"};
  const CompileResult result = compile_cuda(request);
  ASSERT_TRUE(result.ok) << result.log;
  const std::string& single = result.lowered_names.at("&scale<float, 16>");
  const std::string& twice = result.lowered_names.at("&scale<double, 32>");
  EXPECT_TRUE(single.starts_with("_Z5scaleIfLi16EE")) << single;
  EXPECT_NE(single, twice);
  const std::string binary(result.binary.begin(), result.binary.end());
  EXPECT_NE(binary.find(single), std::string::npos) << "the CUBIN's symbols hold the lowered name";
}

TEST_F(NvrtcCompile, ComputeArchGivesPtxTheDriverCanLoad) {
  const CompileResult result = compile_cuda(request_for(kVectorAdd, "compute_90"));
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_TRUE(result.is_ptx);
  ASSERT_FALSE(result.binary.empty());
  EXPECT_EQ(result.binary.back(), '\0') << "cuModuleLoadData reads PTX up to its NUL";
  const std::string ptx(result.binary.data());
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos);
}

TEST_F(NvrtcCompile, CompileErrorIsAResultWithTheLog) {
  const CompileResult result = compile_cuda(request_for("#error boom\n", "sm_90a"));
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(result.binary.empty());
  EXPECT_NE(result.log.find("boom"), std::string::npos) << result.log;
}

TEST_F(NvrtcCompile, UnknownOptionIsAResultNotAnException) {
  CompileRequest request = request_for(kVectorAdd, "sm_90a");
  request.options = {"--no-such-option"};
  const CompileResult result = compile_cuda(request);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("nvrtcCompileProgram"), std::string::npos) << result.log;
}

TEST_F(NvrtcCompile, OptionsReachThePreprocessor) {
  CompileRequest request = request_for("#if TILE != 16\n#error wrong tile\n#endif\n__global__ void k() {}\n", "sm_90a");
  request.options = {"-DTILE=16"};
  EXPECT_TRUE(compile_cuda(request).ok);
  request.options = {"-DTILE=8"};
  EXPECT_FALSE(compile_cuda(request).ok);
}

TEST_F(NvrtcCompile, HalfAndBfloat16HeadersAreFound) {
  const CompileResult result = compile_cuda(request_for(R"(
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void convert(const __half* a, __nv_bfloat16* b) { b[threadIdx.x] = __float2bfloat16(__half2float(a[threadIdx.x])); }
)", "sm_90a"));
  EXPECT_TRUE(result.ok) << result.log;
}

// What optune-cuda-probe will load on an H100: every entry, the 64 KiB-shared case included.
TEST_F(NvrtcCompile, ProbeKernelsCompileForHopper) {
  CompileRequest request = request_for(kProbeSource, "sm_90a");
  request.name_expressions = kProbeNameExpressions;
  const CompileResult result = compile_cuda(request);
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_EQ(result.lowered_names.size(), kProbeNameExpressions.size());
  const std::string binary(result.binary.begin(), result.binary.end());
  for (const auto& [expression, lowered] : result.lowered_names) {
    EXPECT_NE(binary.find(lowered), std::string::npos) << expression;
  }
}

const std::vector<int> kNvrtc13Archs = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};

TEST(CompileArch, ArchSpecificFromHopperOn) {
  EXPECT_EQ(compile_arch(9, 0, kNvrtc13Archs), "sm_90a");
  EXPECT_EQ(compile_arch(10, 0, kNvrtc13Archs), "sm_100a");
  EXPECT_EQ(compile_arch(12, 0, kNvrtc13Archs), "sm_120a");
}

TEST(CompileArch, PlainSmBeforeHopper) {
  EXPECT_EQ(compile_arch(8, 6, kNvrtc13Archs), "sm_86");
  EXPECT_EQ(compile_arch(7, 5, kNvrtc13Archs), "sm_75");
}

TEST(CompileArch, UnknownArchFallsBackToPtxOfTheNewestBelow) {
  EXPECT_EQ(compile_arch(13, 0, kNvrtc13Archs), "compute_121");
  EXPECT_EQ(compile_arch(8, 5, {75, 80, 86}), "compute_80");
}

TEST(CompileArch, DeviceOlderThanEverySupportedArchIsRefused) {
  EXPECT_THROW(compile_arch(6, 1, kNvrtc13Archs), std::invalid_argument);
}

TEST_F(NvrtcCompile, LoadedNvrtcSupportsHopperAndFallsBackBeyondItsList) {
  const std::vector<int> archs = NvrtcApi::get().supported_archs();
  ASSERT_FALSE(archs.empty());
  EXPECT_EQ(compile_arch(9, 0, archs), "sm_90a");
  EXPECT_EQ(compile_arch(8, 6, archs), "sm_86");
  EXPECT_EQ(compile_arch(99, 9, archs), "compute_" + std::to_string(archs.back()));
}

// optune-nvrtc, one compile per process.
using test_support::Child;
using test_support::run;

class NvrtcExecutable : public NvrtcCompile {
 protected:
  void SetUp() override {
    NvrtcCompile::SetUp();
    directory_ = fs::temp_directory_path() / ("optune_nvrtc_" + std::to_string(::getpid()) + "_" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  void write(const std::string& name, const std::string& text) { std::ofstream(directory_ / name) << text; }
  Child compile(const nlohmann::json& request) {
    write("request.json", request.dump());
    return run(std::string(OPTUNE_NVRTC_EXECUTABLE) + " " + (directory_ / "request.json").string() + " " +
               (directory_ / "kernel.cubin").string() + " " + (directory_ / "result.json").string());
  }
  nlohmann::json result() {
    std::ifstream in(directory_ / "result.json");
    return nlohmann::json::parse(in);
  }

  fs::path directory_;
};

TEST_F(NvrtcExecutable, CompiledWritesTheBinaryAndTheResult) {
  write("kernel.cu", kTemplated);
  const Child child = compile({{"source", "kernel.cu"}, {"arch", "sm_90a"}, {"name_expressions", {"&scale<float, 16>"}}});
  ASSERT_EQ(child.status, 0) << child.output;
  std::ifstream binary(directory_ / "kernel.cubin", std::ios::binary);
  char magic[4] = {};
  binary.read(magic, 4);
  EXPECT_EQ(std::memcmp(magic, "\x7f" "ELF", 4), 0);
  const nlohmann::json json = result();
  EXPECT_TRUE(json["ok"].get<bool>());
  EXPECT_FALSE(json["is_ptx"].get<bool>());
  EXPECT_EQ(json["binary_bytes"].get<std::size_t>(), fs::file_size(directory_ / "kernel.cubin"));
  EXPECT_EQ(json["nvrtc"]["library"].get<std::string>(), NvrtcApi::get().library);
  EXPECT_TRUE(json["lowered_names"]["&scale<float, 16>"].get<std::string>().starts_with("_Z5scale"));
}

TEST_F(NvrtcExecutable, CompileErrorExitsOneWithTheLog) {
  write("kernel.cu", "#error boom\n");
  const Child child = compile({{"source", (directory_ / "kernel.cu").string()}, {"arch", "sm_90a"}});
  ASSERT_EQ(child.status, 1) << child.output;
  EXPECT_FALSE(fs::exists(directory_ / "kernel.cubin"));
  const nlohmann::json json = result();
  EXPECT_FALSE(json["ok"].get<bool>());
  EXPECT_NE(json["log"].get<std::string>().find("boom"), std::string::npos);
}

TEST_F(NvrtcExecutable, BadRequestExitsTwoWithOneLine) {
  const Child missing_source = compile({{"source", "absent.cu"}, {"arch", "sm_90a"}});
  EXPECT_EQ(missing_source.status, 2);
  EXPECT_NE(missing_source.output.find("cannot read"), std::string::npos) << missing_source.output;
  EXPECT_EQ(std::count(missing_source.output.begin(), missing_source.output.end(), '\n'), 1);

  write("kernel.cu", kVectorAdd);
  const Child missing_arch = compile({{"source", "kernel.cu"}});
  EXPECT_EQ(missing_arch.status, 2) << missing_arch.output;
  EXPECT_FALSE(fs::exists(directory_ / "result.json"));

  EXPECT_EQ(run(OPTUNE_NVRTC_EXECUTABLE).status, 2);
}

}  // namespace
