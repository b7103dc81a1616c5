// The CPU builder's precompiled headers (backends/cpu/src/precompiled_headers.hpp) with the real
// compiler: which header a candidate's source starts with, the .gch compiled once per command and
// header, GCC reading it in place of the header (its -H trace says so), and the fallbacks.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "optune/measure/subprocess.hpp"
#include "precompiled_headers.hpp"

namespace optune::measure {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class PrecompiledHeadersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("optune_pch_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    write(root_ / "include/optune/kernels/cpu/square.hpp",
          "#pragma once\n#include <vector>\n#include <numeric>\n"
          "template <int N> int square_sum() { std::vector<int> v(N); std::iota(v.begin(), v.end(), 0);\n"
          "  int s = 0; for (int x : v) s += x * x; return s; }\n");
    write(root_ / "include/optune/kernels/cpu/broken.hpp", "#pragma once\nthis is not C++\n");
    command_ = {"c++", "-std=c++20", "-O2", "-fPIC", "-shared", "-I" + (root_ / "include").string()};
  }
  void TearDown() override { fs::remove_all(root_); }

  // The compile of `source` with `command`, its -H trace (the headers it read) returned.
  std::string compile_trace(std::vector<std::string> command, const std::string& source) {
    write(root_ / "candidate.cpp", source);
    command.insert(command.end(), {"-H", (root_ / "candidate.cpp").string(), "-o", (root_ / "candidate.so").string()});
    Subprocess compiler = Subprocess::spawn(command, {.pipe_stdio = false, .output_file = (root_ / "trace.log").string()});
    const auto status = compiler.wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(120));
    EXPECT_TRUE(status && status->exited && status->code == 0) << read(root_ / "trace.log");
    return read(root_ / "trace.log");
  }

  fs::path root_;
  std::vector<std::string> command_;
};

TEST(FirstOptuneHeader, IsTheFirstIncludeWhenOnlyCommentsComeBeforeIt) {
  EXPECT_EQ(first_optune_header("// a candidate\n\n#include <optune/kernels/cpu/gemm.hpp>\nint x;\n"),
            "optune/kernels/cpu/gemm.hpp");
  EXPECT_EQ(first_optune_header("/* one\n   two */\n  #include <optune/a.hpp>\n"), "optune/a.hpp");
  EXPECT_EQ(first_optune_header("/* one line */\n#include <optune/a.hpp>\n"), "optune/a.hpp");
  EXPECT_EQ(first_optune_header("#include <cstdint>\n#include <optune/a.hpp>\n"), "");  // not first
  EXPECT_EQ(first_optune_header("int x;\n#include <optune/a.hpp>\n"), "");
  EXPECT_EQ(first_optune_header("#include \"optune/a.hpp\"\n"), "");
  EXPECT_EQ(first_optune_header("#include <optune/a.hpp\n"), "");  // unclosed
  EXPECT_EQ(first_optune_header(""), "");
}

TEST_F(PrecompiledHeadersTest, TheCompilerReadsTheHeadersGchInPlaceOfTheHeader) {
  PrecompiledHeaders headers((root_ / "build").string(), 120);
  const std::string source = "// candidate\n#include <optune/kernels/cpu/square.hpp>\n"
                             "extern \"C\" int run() { return square_sum<10>(); }\n";
  const auto dir = headers.include_dir(command_, source);
  ASSERT_TRUE(dir.has_value());
  const fs::path gch = fs::path(*dir) / "optune/kernels/cpu/square.hpp.gch";
  ASSERT_TRUE(fs::exists(gch));
  const auto compiled_at = fs::last_write_time(gch);
  // Once per command and header: a second candidate of it takes the same folder, compiling nothing.
  EXPECT_EQ(headers.include_dir(command_, source + "// another\n"), dir);
  EXPECT_EQ(fs::last_write_time(gch), compiled_at);

  std::vector<std::string> with_pch = command_;
  with_pch.insert(with_pch.begin() + 5, "-I" + *dir);
  const std::string trace = compile_trace(with_pch, source);
  if (trace.find("clang") != std::string::npos) GTEST_SKIP() << "not GCC";
  EXPECT_NE(trace.find("! " + gch.string()), std::string::npos) << trace;   // the .gch read
  EXPECT_EQ(trace.find(". " + (root_ / "include/optune/kernels/cpu/square.hpp").string()), std::string::npos)
      << trace;                                                            // the header not parsed
  // Another command (other flags) compiles its own.
  std::vector<std::string> o3 = command_;
  o3[2] = "-O3";
  const auto other = headers.include_dir(o3, source);
  ASSERT_TRUE(other.has_value());
  EXPECT_NE(*other, *dir);
}

TEST_F(PrecompiledHeadersTest, WithoutAUsablePrecompiledHeaderCandidatesCompileAsBefore) {
  PrecompiledHeaders headers((root_ / "build").string(), 120);
  // A header that does not compile: no folder, and no second attempt.
  const std::string broken = "#include <optune/kernels/cpu/broken.hpp>\n";
  EXPECT_FALSE(headers.include_dir(command_, broken).has_value());
  EXPECT_FALSE(headers.include_dir(command_, broken).has_value());
  // A header the command's include dirs do not hold, and a source starting with another header.
  EXPECT_FALSE(headers.include_dir(command_, "#include <optune/kernels/cpu/absent.hpp>\n").has_value());
  EXPECT_FALSE(headers.include_dir(command_, "#include <vector>\n").has_value());
  // A .gch made with other flags is passed over: the header is read from the next folder.
  const std::string source = "#include <optune/kernels/cpu/square.hpp>\nextern \"C\" int run() { return square_sum<4>(); }\n";
  const auto dir = headers.include_dir(command_, source);
  ASSERT_TRUE(dir.has_value());
  std::vector<std::string> other_flags = command_;
  other_flags[2] = "-O0";
  other_flags.insert(other_flags.begin() + 5, "-I" + *dir);
  const std::string trace = compile_trace(other_flags, source);
  EXPECT_NE(trace.find(". " + (root_ / "include/optune/kernels/cpu/square.hpp").string()), std::string::npos)
      << trace;
}

}  // namespace
}  // namespace optune::measure
