#include "optune/measure/machine_load.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace optune::measure {

std::optional<LoadWindow::Ticks> LoadWindow::machine_ticks() {
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice", in clock ticks
  // (guest time is already counted in user).
  std::ifstream stat("/proc/stat");
  std::string label;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq) || label != "cpu")
    return std::nullopt;
  stat >> steal;  // absent on old kernels
  const double busy = user + nice + system + irq + softirq + steal;
  return Ticks{busy, busy + idle + iowait};
}

std::optional<double> LoadWindow::process_ticks(pid_t pid) {
  std::ifstream stat(pid == ::getpid() ? std::string("/proc/self/stat") : "/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  // The command name (field 2) is in parentheses and may hold spaces: fields are counted after it.
  const auto name_end = line.rfind(')');
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(name_end + 1));
  std::string skipped;
  for (int field = 3; field < 14; ++field) fields >> skipped;  // state .. cmajflt
  double user = 0, system = 0;
  if (!(fields >> user >> system)) return std::nullopt;
  return user + system;
}

LoadWindow LoadWindow::open(pid_t measuring_pid) {
  LoadWindow window;
  window.measuring_pid_ = measuring_pid;
  window.machine_ = machine_ticks();
  window.measuring_ = process_ticks(measuring_pid);
  window.own_ = process_ticks(::getpid());
  return window;
}

std::optional<double> LoadWindow::close() const {
  const auto machine = machine_ticks();
  const auto measuring = process_ticks(measuring_pid_);
  const auto own = process_ticks(::getpid());
  if (!machine_ || !measuring_ || !own_ || !machine || !measuring || !own) return std::nullopt;
  const double total = machine->total - machine_->total;
  if (total <= 0) return std::nullopt;
  const double ours = (*measuring - *measuring_) + (*own - *own_);
  const double others = machine->busy - machine_->busy - ours;
  // The counters tick at 100 Hz per core and are read at slightly different moments: clamp.
  return std::clamp(others / total, 0.0, 1.0);
}

}  // namespace optune::measure
