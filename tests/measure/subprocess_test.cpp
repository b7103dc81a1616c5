#include "optune/measure/subprocess.hpp"

#include <gtest/gtest.h>

#include <csignal>

namespace optune::measure {
namespace {

using namespace std::chrono_literals;
auto soon(std::chrono::milliseconds ms) { return std::chrono::steady_clock::now() + ms; }

TEST(Subprocess, ReportsExitCode) {
  auto child = Subprocess::spawn({"sh", "-c", "exit 3"}, {});
  auto status = child.wait_until(soon(5000ms));
  ASSERT_TRUE(status);
  EXPECT_TRUE(status->exited);
  EXPECT_EQ(status->code, 3);
}

TEST(Subprocess, DeadlinePassesWhileChildRunsThenKillEndsIt) {
  auto child = Subprocess::spawn({"sleep", "100"}, {});
  EXPECT_FALSE(child.wait_until(soon(50ms)));
  auto status = child.kill();
  EXPECT_TRUE(status.signaled);
  EXPECT_EQ(status.signal, SIGKILL);
}

TEST(Subprocess, ExchangesLinesOverPipes) {
  auto child = Subprocess::spawn({"cat"}, {.pipe_stdio = true, .output_file = ""});
  ASSERT_TRUE(child.write_line("hello worker"));
  auto line = child.read_line(soon(5000ms));
  ASSERT_TRUE(line);
  EXPECT_EQ(*line, "hello worker");
}

TEST(Subprocess, SilentChildTimesOut) {
  auto child = Subprocess::spawn({"sleep", "100"}, {.pipe_stdio = true, .output_file = ""});
  EXPECT_FALSE(child.read_line(soon(50ms)));
  EXPECT_TRUE(child.timed_out());
}

TEST(Subprocess, WritingToDeadChildFailsWithoutSignal) {
  auto child = Subprocess::spawn({"true"}, {.pipe_stdio = true, .output_file = ""});
  ASSERT_TRUE(child.wait_until(soon(5000ms)));
  std::string big(1 << 20, 'x');  // more than a socket buffer: the write must notice the reader is gone
  EXPECT_FALSE(child.write_line(big));
}

TEST(Subprocess, MissingProgramThrows) {
  EXPECT_THROW(Subprocess::spawn({"/nonexistent/program"}, {}), std::runtime_error);
}

}  // namespace
}  // namespace optune::measure
