// What the tests of `optune job run` share: jobs started in the background as real processes
// (their output in <dir>/<name>.out), waited for with the exit status the shell shows, and killed
// at the end of the test if still running.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "command_test.hpp"

extern char** environ;

namespace optune::test_support {

class JobCommandTest : public CommandTest {
 protected:
  void TearDown() override {
    for (pid_t pid : background_) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    CommandTest::TearDown();
  }

  // Starts `optune job run <file>` without waiting; its output goes to <name>.out.
  pid_t start_job(const std::filesystem::path& file, const std::string& name) {
    return start({OPTUNE_EXECUTABLE, "job", "run", file.string()}, name);
  }
  // Starts `optune <arguments>` (split at spaces) without waiting; its output goes to <name>.out.
  pid_t start_optune(const std::string& arguments, const std::string& name) {
    std::vector<std::string> args = {OPTUNE_EXECUTABLE};
    std::size_t start_at = 0;
    while (start_at < arguments.size()) {
      const std::size_t space = arguments.find(' ', start_at);
      const std::string word = arguments.substr(start_at, space == std::string::npos ? std::string::npos : space - start_at);
      if (!word.empty()) args.push_back(word);
      if (space == std::string::npos) break;
      start_at = space + 1;
    }
    return start(args, name);
  }

  pid_t start(std::vector<std::string> args, const std::string& name) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string out = (dir_ / (name + ".out")).string();
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    EXPECT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    background_.push_back(pid);
    return pid;
  }

  // The exit status of a background job, as the shell shows it (128 + signal when killed).
  int wait_job(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    background_.erase(std::remove(background_.begin(), background_.end(), pid), background_.end());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::vector<pid_t> background_;
};

}  // namespace optune::test_support
