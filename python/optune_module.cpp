// optune._optune: the Python module's native part. It calls the same library functions as the
// optune command (optune/app/*), releases the GIL while measuring, and hands results to the
// Python side (optune/__init__.py) as JSON text, which that side turns into dicts.
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "optune/app/bad_input.hpp"
#include "optune/app/describe.hpp"
#include "optune/app/failure.hpp"
#include "optune/app/dispatch.hpp"
#include "optune/app/pick.hpp"
#include "optune/app/query.hpp"
#include "optune/app/replay.hpp"
#include "optune/app/tuning.hpp"
#include "optune/backends/registry.hpp"
#include "optune/db/database.hpp"
#include "optune/tuner/scheduling/shape_range.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;
using namespace optune;

namespace {

// An installed wheel carries the worker in the package (optune/bin); a build tree's module uses
// the build's bin folder.
app::InstallPaths install_paths(const std::string& package_dir, const std::string& cache_dir,
                                const std::string& lock_dir) {
  fs::path packaged = fs::path(package_dir) / "bin";
  const std::string bin = fs::exists(packaged / "optune-worker") ? packaged.string() : OPTUNE_BUILD_BIN_DIR;
  return app::install_paths_beside(bin, cache_dir, lock_dir);
}

// tune()'s arguments (optune/__init__.py builds them) as the command line's request.
app::TuneRequest tune_request(const py::dict& arguments) {
  auto get = [&](const char* key) { return arguments[key]; };
  app::TuneRequest request;
  request.op = get("op").cast<std::string>();
  request.shape = get("shape").cast<std::string>();
  request.suite = get("suite").cast<std::string>();
  request.kernel_file = get("kernel").cast<std::string>();
  request.layout = get("layout").cast<std::string>();
  request.dtype = get("suite_dtype").cast<std::string>();
  request.template_name = get("template").cast<std::string>();
  try {
    request.tuning.tuner.objective = cost_model::parse_objective(get("objective").cast<std::string>());
    request.scheduler.policy = tuner::parse_scheduler_policy(get("scheduler").cast<std::string>());
  } catch (const std::invalid_argument& error) {
    throw app::BadInput(std::string("tune: ") + error.what());
  }
  request.tuning.tuner.cheap_share = get("cheap_share").cast<double>();
  request.compile_ahead = get("compile_ahead").cast<std::string>();
  request.measuring.build.compile_timeout = get("compile_timeout").cast<double>();
  request.measuring.rpc_wait = get("rpc_wait").cast<double>();
  request.database = get("db").cast<std::string>();
  request.wait_lock = get("wait_lock").cast<bool>();
  request.tuning.tuner.name = get("tuner").cast<std::string>();
  request.tuning.trials = get("trials").cast<std::size_t>();
  request.tuning.batch_size = get("batch_size").cast<std::size_t>();
  request.tuning.early_stopping = get("early_stopping").cast<std::size_t>();
  request.tuning.remeasure_top = get("remeasure").cast<std::size_t>();
  request.tuning.tuner.seed = get("seed").cast<std::uint64_t>();
  request.tuning.tuner.transfer = get("transfer").cast<bool>();
  request.measuring.target = get("target").cast<std::string>();
  request.measuring.timing.repeat = get("repeat").cast<int>();
  request.measuring.timing.number = get("number").cast<int>();
  if (!get("min_repeat_ms").is_none()) request.measuring.min_repeat_ms = get("min_repeat_ms").cast<double>();
  request.measuring.timing.timeout_seconds = get("timeout").cast<double>();
  request.measuring.timing.bail_out = get("bail_out").cast<double>();
  request.measuring.timing.adaptive = get("timing").cast<std::string>() == "adaptive";
  request.measuring.build.jobs = get("jobs").cast<int>();
  request.measuring.build.compiler = get("compiler").cast<std::string>();
  request.measuring.rpc = get("rpc").cast<std::string>();
  request.measuring.token_file = get("token_file").cast<std::string>();
  request.trials_per_task = get("trials_per_task").cast<std::size_t>();
  request.budget = get("budget").cast<std::string>();
  if (request.tuning.batch_size == 0) throw app::BadInput("tune: batch_size must be at least 1");
  return request;
}

// tune()'s defaults as the command line has them (app::TuneRequest's own), so that Python keeps no
// second list of them.
nlohmann::json tune_defaults() {
  const app::TuneRequest request;
  const auto& tuning = request.tuning;
  const auto& timing = request.measuring.timing;
  return {{"op", request.op},
          {"target", request.measuring.target},
          {"db", request.database},
          {"tuner", tuning.tuner.name},
          {"trials", tuning.trials},
          {"batch_size", tuning.batch_size},
          {"early_stopping", tuning.early_stopping},
          {"remeasure", tuning.remeasure_top},
          {"seed", tuning.tuner.seed},
          {"transfer", tuning.tuner.transfer},
          {"objective", cost_model::objective_name(tuning.tuner.objective)},
          {"cheap_share", tuning.tuner.cheap_share},
          {"compile_ahead", request.compile_ahead},
          {"scheduler", tuner::scheduler_policy_name(request.scheduler.policy)},
          {"repeat", timing.repeat},
          {"number", timing.number},
          // null: the target backend's (app::timing_for)
          {"min_repeat_ms", request.measuring.min_repeat_ms ? nlohmann::json(*request.measuring.min_repeat_ms)
                                                             : nlohmann::json(nullptr)},
          {"timeout", timing.timeout_seconds},
          {"bail_out", timing.bail_out},
          {"timing", timing.adaptive ? "adaptive" : "full"},
          {"jobs", request.measuring.build.jobs},
          {"compiler", request.measuring.build.compiler},
          {"compile_timeout", request.measuring.build.compile_timeout},
          {"rpc_wait", request.measuring.rpc_wait}};
}

std::string tune(const py::dict& arguments, const std::string& package_dir, const py::object& callback) {
  auto get = [&](const char* key) { return arguments[key]; };
  const app::TuneRequest request = tune_request(arguments);
  tuner::Progress progress(nullptr, false);
  // After every batch: Ctrl-C (Python's pending signals) stops the run as the callback's exceptions
  // do, with the batches measured so far recorded.
  progress.set_observer([callback](const tuner::ProgressState& state) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (callback.is_none()) return;
    py::dict update;
    update["task"] = state.task;
    update["trial"] = state.trial;
    update["trials"] = state.trials;
    update["best_gflops"] = state.best_gflops;
    update["failures"] = state.failures;
    update["unit"] = state.unit;
    update["noisy"] = state.noisy;
    update["slow"] = state.slow;
    update["saved_seconds"] = state.saved_seconds;
    update["load"] = state.load ? py::cast(*state.load) : py::none();
    update["device_load"] = state.device_load ? py::cast(*state.device_load) : py::none();
    callback(update);
  });
  const auto paths =
      install_paths(package_dir, get("cache_dir").cast<std::string>(), get("lock_dir").cast<std::string>());
  nlohmann::json result;
  {
    py::gil_scoped_release no_gil;
    // A suite's object, a range's array (one outcome per representative shape), one shape's object.
    result = app::outcome_json(app::run(app::plan_tune(request), paths, progress));
  }
  return result.dump();
}

// A measured dispatch (app/dispatch.hpp): tune()'s arguments for each shape's tuning, and the
// dispatch's own.
std::string dispatch(const py::dict& arguments, const std::string& package_dir) {
  auto get = [&](const char* key) { return arguments[key]; };
  app::DispatchRequest request;
  request.tune = tune_request(arguments);
  request.shapes = get("shapes").cast<std::vector<std::string>>();
  request.samples = get("samples").cast<std::size_t>();
  request.held_out = get("held_out").cast<std::vector<std::string>>();
  request.held_out_count = get("held_out_count").cast<std::size_t>();
  request.most_configs = get("configs").cast<std::size_t>();
  request.within = get("within").cast<double>() / 100;
  request.finalists = get("finalists").cast<std::size_t>();
  request.refine = get("refine").cast<std::size_t>();
  request.rounds = get("rounds").cast<int>();
  const auto paths =
      install_paths(package_dir, get("cache_dir").cast<std::string>(), get("lock_dir").cast<std::string>());
  tuner::Progress progress(nullptr, false);
  py::gil_scoped_release no_gil;
  return app::dispatch_json(app::make_dispatch(request, paths, progress)).dump();
}

std::string query(const std::string& database, const std::string& op, const std::string& shape,
                  const std::string& target, const std::string& device, std::size_t top, bool history,
                  const std::string& since) {
  app::QueryRequest request{database, op, shape, target, device, std::nullopt, top, history};
  if (!since.empty()) request.since = app::parse_since(since);
  nlohmann::json all = nlohmann::json::array();
  {
    py::gil_scoped_release no_gil;
    for (const auto& record : app::query_records(request).records) all.push_back(app::record_json(record));
  }
  return all.dump();
}

std::string pick(const std::string& database, const std::string& op, const std::string& shape,
                 const std::string& target, const std::string& device) {
  py::gil_scoped_release no_gil;
  return app::pick_json(app::pick_config({database, op, shape, target, device})).dump();
}

std::string replay(const std::string& landscape, const std::vector<std::string>& tuners, std::size_t seeds,
                   const std::vector<std::size_t>& budgets, std::size_t batch_size,
                   const std::vector<std::string>& transfer_from) {
  app::ReplayRequest request{landscape, tuners, seeds, budgets, batch_size, transfer_from};
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  py::gil_scoped_release no_gil;
  app::replay_landscape(request, [&](const tuner::LandscapeFile& file, const app::TunerReport& report) {
    all.push_back(app::replay_json(file, report, seeds));
  });
  return all.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);  // a file name need not be UTF-8
}

}  // namespace

PYBIND11_MODULE(_optune, m) {
  m.doc() = "optune's native part; use the optune package";
  // What the command line answers with exit code 2.
  static py::exception<app::BadInput> bad_input(m, "BadInput", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const std::exception& e) {
      // The command line's rule: exit 2 is optune.BadInput; a failed run (a full disk) is pybind11's
      // own translation (RuntimeError, MemoryError, ...).
      if (app::failure_kind(e) != app::FailureKind::kBadInput) throw;
      bad_input(app::one_line(e.what()).c_str());
    }
  });
  m.def("tune", &tune, py::arg("arguments"), py::arg("package_dir"), py::arg("progress"));
  m.def("tune_defaults", [] { return tune_defaults().dump(); });
  m.def("dispatch", &dispatch, py::arg("arguments"), py::arg("package_dir"));
  m.def("query", &query, py::arg("db"), py::arg("op"), py::arg("shape"), py::arg("target"), py::arg("device"),
        py::arg("top"), py::arg("history"), py::arg("since"));
  m.def("pick", &pick, py::arg("db"), py::arg("op"), py::arg("shape"), py::arg("target"), py::arg("device"));
  m.def("replay", &replay, py::arg("landscape"), py::arg("tuners"), py::arg("seeds"), py::arg("budgets"),
        py::arg("batch_size"), py::arg("transfer_from"));
  m.def("space", [](const std::string& op, const std::string& shape, const std::string& target,
                    const std::string& kernel) { return app::describe_space(op, shape, target, kernel).dump(); });
  m.def("devices", [] { return app::describe_devices().dump(); });
  // The source extensions of each backend kernel files may name, from the build's backends: the
  // file a kernel given as code text is written to (_kernel_file.py).
  m.def("kernel_source_extensions", [] {
    std::map<std::string, std::vector<std::string>> extensions;
    for (const auto* traits : backends::kernel_file_backends().all())
      for (std::string_view extension : traits->source_extensions)
        extensions[std::string(traits->backend)].emplace_back(extension);
    return extensions;
  });
  m.attr("__version__") = OPTUNE_VERSION;
  // Where this module's build put the optune command: the console script runs it when the package
  // carries none (a build tree's module; an installed one carries optune/bin/optune).
  m.attr("build_bin_dir") = OPTUNE_BUILD_BIN_DIR;
}
