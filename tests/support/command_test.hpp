// What the tests of the optune command share: a fresh folder per test (removed after it), the
// command run as a real process with its exit code and output captured, and the bad-input check
// (exit code 2 and exactly one line on stderr naming the problem). The including test target
// defines OPTUNE_EXECUTABLE.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace optune::test_support {

struct CommandRun {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class CommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("optune-" + std::string(test->test_suite_name()) + "-" + std::to_string(::getpid()) + "-" + test->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "tmp");
    // Commands (and jobs a test kills) make their build folders under TMPDIR: inside the test's
    // folder, a killed command's leftovers go with it.
    if (const char* tmpdir = std::getenv("TMPDIR")) saved_tmpdir_ = tmpdir;
    ::setenv("TMPDIR", (dir_ / "tmp").c_str(), 1);
    // The machine-wide run locks of this test's commands: the test's own, so that tests run side by
    // side (ctest -j) do not refuse each other's runs on this machine's one CPU device.
    ::setenv("OPTUNE_LOCK_DIR", (dir_ / "locks").c_str(), 1);
  }
  void TearDown() override {
    if (saved_tmpdir_.empty()) ::unsetenv("TMPDIR");
    else ::setenv("TMPDIR", saved_tmpdir_.c_str(), 1);
    ::unsetenv("OPTUNE_LOCK_DIR");
    std::filesystem::remove_all(dir_);
  }

  // `environment` ("NAME=value ...") is set for the command only.
  CommandRun optune(const std::string& arguments, const std::string& environment = "") {
    const std::string command = environment + " " + OPTUNE_EXECUTABLE + " " + arguments + " > " +
                                (dir_ / "out").string() + " 2> " + (dir_ / "err").string();
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir_ / "out"), slurp(dir_ / "err")};
  }

  void expect_bad_input(const std::string& arguments, const std::string& words) {
    CommandRun run = optune(arguments);
    EXPECT_EQ(run.code, 2) << arguments << "\n" << run.out << run.err;
    EXPECT_NE(run.err.find(words), std::string::npos) << arguments << "\nstderr: " << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }

  std::string db() const { return (dir_ / "optune.db").string(); }
  std::filesystem::path dir_;

 private:
  std::string saved_tmpdir_;
};

}  // namespace optune::test_support
