// What says how far a measurement is to be trusted: the confidence interval of a median (a
// record's spread, the final comparison's interval) and the machine's load beside a measured
// process, with busy processes this test starts itself.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "optune/measure/machine_load.hpp"
#include "optune/measure/median_interval.hpp"
#include "busy_processes.hpp"

namespace optune::measure {
namespace {

using test_support::BusyProcesses;

TEST(MedianInterval, FiveValuesGiveTheirRange) {
  const Interval interval = median_interval({5, 1, 4, 2, 3});
  EXPECT_EQ(interval.low, 1);
  EXPECT_EQ(interval.high, 5);
  EXPECT_DOUBLE_EQ(*median_spread({5, 1, 4, 2, 3}), (5 - 1) / 2.0 / 3);
}

TEST(MedianInterval, MoreValuesNarrowItToOrderStatistics) {
  std::vector<double> values;
  for (int i = 1; i <= 15; ++i) values.push_back(i);
  // Fifteen values: [x(4), x(12)] holds the median with 96.5%; [x(5), x(11)] only with 88%.
  const Interval interval = median_interval(values);
  EXPECT_EQ(interval.low, 4);
  EXPECT_EQ(interval.high, 12);
}

TEST(MedianInterval, OneOutlierBarelyMovesAWideSample) {
  std::vector<double> values(40, 1.0);
  values.push_back(100.0);  // a candidate descheduled once
  EXPECT_EQ(*median_spread(values), 0);
}

TEST(MedianInterval, TooFewValuesHaveNoSpread) {
  EXPECT_FALSE(median_spread({}).has_value());
  EXPECT_FALSE(median_spread({0.001}).has_value());
  EXPECT_TRUE(median_spread({0.001, 0.002}).has_value());
}

TEST(LoadWindow, SeesProcessesBusyBesideTheMeasuredOne) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const pid_t measured = ::fork();  // stands for the worker: idle, its time is not "other"
  if (measured == 0) {
    ::pause();
    ::_exit(0);
  }
  std::optional<double> load;
  {
    BusyProcesses busy(cores);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const LoadWindow window = LoadWindow::open(measured);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    load = window.close();
  }
  ::kill(measured, SIGKILL);
  ::waitpid(measured, nullptr, 0);
  ASSERT_TRUE(load.has_value()) << "Linux's /proc is readable here";
  // One spinning process per core leaves others at most the scheduler's scraps.
  EXPECT_GT(*load, 0.5);
  EXPECT_LE(*load, 1.0);
}

TEST(LoadWindow, TheMeasuredProcessItselfIsNotLoad) {
  const pid_t spinner = ::fork();
  if (spinner == 0) {
    for (;;) asm volatile("" ::: "memory");  // spins; the barrier keeps the loop
  }
  const pid_t sleeper = ::fork();
  if (sleeper == 0) {
    ::pause();
    ::_exit(0);
  }
  // Two windows over the same time: the spinner's CPU time is load to the one watching the
  // sleeper, and not to the one watching the spinner itself.
  const LoadWindow watching_spinner = LoadWindow::open(spinner);
  const LoadWindow watching_sleeper = LoadWindow::open(sleeper);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const auto spinner_excluded = watching_spinner.close();
  const auto spinner_included = watching_sleeper.close();
  for (pid_t pid : {spinner, sleeper}) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  ASSERT_TRUE(spinner_excluded && spinner_included);
  EXPECT_LT(*spinner_excluded, *spinner_included);
}

TEST(LoadWindow, AProcessThatHasGoneGivesNoLoad) {
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  EXPECT_FALSE(LoadWindow::open(gone).close().has_value());
}

}  // namespace
}  // namespace optune::measure
