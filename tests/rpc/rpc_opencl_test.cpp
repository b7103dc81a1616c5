// OpenCL targets over RPC, end to end on loopback: a server reports its OpenCL devices (PoCL
// here), describes the device of a client's target, compiles the shipped OpenCL source into its
// own program cache, and the records carry that remote OpenCL device; a target the server has no
// device for is bad input; a server whose device is not the task's measures nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/backends/cpu/cpu_device.hpp"
#include "optune/backends/opencl/devices.hpp"
#include "optune/measure/rpc/rpc_runner.hpp"
#include "optune/measure/rpc/rpc_session.hpp"
#include "rpc_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using namespace optune;
using namespace optune::rpc_test;

class RpcOpenCLTest : public RpcTest {
 protected:
  void SetUp() override {
    // The servers inherit it: their program cache is checked, which PoCL gets only with its own
    // cache off (program_cache.hpp).
    ::setenv("POCL_KERNEL_CACHE", "0", 1);
    if (measure::list_opencl_devices().empty()) GTEST_SKIP() << "no OpenCL device (scripts/setup.sh installs PoCL)";
    RpcTest::SetUp();
    // The server runs on this machine: its first OpenCL device is ours.
    opencl_ = measure::find_opencl_device(backends::parse_target("opencl"));
  }
  // A server whose program cache is under the test's directory, not the user's ~/.cache.
  Daemon& start_opencl_server(const std::string& key, unsigned short tracker_port) {
    return start_server("server", key, tracker_port, {"--opencl-cache", (dir_ / "server-cache").string()});
  }
  kernels::DeviceInfo opencl_;
};

// Seed 6: seed 5 draws a split-K config with sa=0 whose local arguments trip a PoCL assertion
// (pthread_utils.c, setup_kernel_arg_array_with_locals); that is recorded as a crash, as any
// crashing candidate is, but this test wants every record measured.
constexpr const char* kTinyOpenCLTune =
    "tune --op gemm --shape 33,20,17 --tuner random --repeat 2 --min-repeat-ms 1 --quiet --seed 6 --rpc-wait 20";

// A user's OpenCL kernel file over RPC: the artifact carries its source, the request its operands
// and its reference kernel's source; nothing of the file is read on the server.
TEST_F(RpcOpenCLTest, KernelFilesAreTunedOverRpc) {
  auto& tracker = start_tracker();
  auto& server = start_opencl_server("gpu", tracker.port);
  CommandRun run = optune("tune --kernel " + std::string(OPTUNE_SOURCE_DIR) + "/configs/kernels/transpose.toml " +
                          "--shape N=128,M=64 --target opencl --tuner random --trials 3 --remeasure 0 --repeat 2 " +
                          "--min-repeat-ms 1 --quiet --rpc-wait 20 --db " + db() + rpc("gpu", tracker));
  ASSERT_EQ(run.code, 0) << run.out << run.err << slurp(server.log);
  auto all = records();
  ASSERT_GE(all.size(), 3u);
  for (const auto& r : all) {
    EXPECT_EQ(r.error_kind, "ok") << r.error_message;
    EXPECT_TRUE(r.template_name.starts_with("kernel.transpose.opencl#")) << r.template_name;
    EXPECT_EQ(r.device_id, opencl_.fingerprint_id()) << "records carry the server's OpenCL device";
  }
}

TEST_F(RpcOpenCLTest, TuningAnOpenCLTargetOverRpcRecordsTheServersOpenCLDevice) {
  auto& tracker = start_tracker();
  auto& server = start_opencl_server("gpu", tracker.port);
  const std::string device_line = "opencl device " + opencl_.platform + " / " + opencl_.name;
  EXPECT_TRUE(contains(server.announce, device_line)) << server.announce;

  CommandRun run = optune(std::string(kTinyOpenCLTune) + " --target opencl --trials 2 --batch-size 2 --remeasure 1 --db " +
                          db() + rpc("gpu", tracker));
  ASSERT_EQ(run.code, 0) << run.out << run.err << slurp(server.log);
  EXPECT_TRUE(contains(run.out, opencl_.name)) << run.out;
  auto all = records();
  expect_the_records_of_a_tiny_run(all);
  for (const auto& r : all) {
    EXPECT_EQ(r.error_kind, "ok") << r.error_message;
    EXPECT_EQ(r.target, "opencl");
    EXPECT_EQ(r.template_name, "gemm.opencl");
    EXPECT_EQ(r.device_id, opencl_.fingerprint_id()) << "records carry the server's OpenCL device";
    EXPECT_EQ(r.device_fingerprint.value("kind", ""), "opencl") << r.device_fingerprint;
    EXPECT_EQ(r.device_fingerprint.value("driver_version", ""), opencl_.driver_version);
    EXPECT_NE(r.device_id, device_id(server)) << "not the server's CPU";
  }
  // Read back through the command line, as a user would.
  CommandRun query = optune("query --format json --top 5 --db " + db());
  ASSERT_EQ(query.code, 0) << query.err;
  auto rows = nlohmann::json::parse(query.out);
  ASSERT_FALSE(rows.empty()) << query.out;
  for (const auto& row : rows) EXPECT_EQ(row.value("device", ""), opencl_.fingerprint_id()) << row;
  // The source travelled; the program was compiled and cached on the server's side; the artifact files are gone.
  EXPECT_FALSE(fs::is_empty(dir_ / "server-cache")) << slurp(server.log);
  EXPECT_TRUE(fs::is_empty(dir_ / "server-work"));

  // A client session sees the server's devices and asks for its target's.
  auto session = measure::rpc::RpcSession::open({0, "gpu", {"127.0.0.1", server.port}, false, {}}, {}, 5);
  ASSERT_EQ(session.devices().size(), 1 + measure::list_opencl_devices().size());
  EXPECT_EQ(session.devices()[0].fingerprint_id(), device_id(server));
  EXPECT_EQ(session.devices()[1].fingerprint_id(), opencl_.fingerprint_id());
  EXPECT_EQ(session.describe("opencl:0:0", 30).fingerprint_id(), opencl_.fingerprint_id());
  EXPECT_EQ(session.describe("cpu", 30).fingerprint_id(), device_id(server));
  EXPECT_THROW(session.describe("opencl:9:9", 30), measure::NoSuchDeviceError);

  // The tracker shows the server's OpenCL device beside its CPU.
  CommandRun status = optune("rpc status --tracker 127.0.0.1:" + std::to_string(tracker.port));
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_TRUE(contains(status.out, "opencl " + opencl_.platform + " / " + opencl_.name)) << status.out;

  // An overnight job with `rpc = ...` and an OpenCL target measures there too.
  std::ofstream(dir_ / "job.toml") << "name = \"remote-opencl\"\ntarget = \"opencl\"\nrpc = \"gpu@127.0.0.1:"
                                   << tracker.port << "\"\nbudget = 2\ntuner = \"random\"\nbatch_size = 2\n"
                                   << "remeasure = 0\nseed = 3\ndatabase = \"" << db() << "\"\n"
                                   << "[[workload]]\nop = \"gemm\"\nshape = \"24,16,8\"\n"
                                   << "[measure]\nrepeat = 1\nmin_repeat_ms = 1\ntimeout = 30\n";
  CommandRun job = optune("job run " + (dir_ / "job.toml").string());
  ASSERT_EQ(job.code, 0) << job.out << job.err << slurp(server.log);
  std::size_t job_records = 0;
  for (const auto& r : records()) {
    if (r.run_id != "job:remote-opencl") continue;
    ++job_records;
    EXPECT_EQ(r.error_kind, "ok") << r.error_message;
    EXPECT_EQ(r.device_id, opencl_.fingerprint_id());
  }
  EXPECT_GE(job_records, 2u);  // the default and trials (the budget's counting is the job's business)
}

TEST_F(RpcOpenCLTest, OpenCLTargetTheServerLacksIsBadInputNamingItsDevices) {
  auto& tracker = start_tracker();
  auto& server = start_opencl_server("gpu", tracker.port);
  CommandRun run = optune(std::string(kTinyOpenCLTune) + " --target opencl:0:no-such-device --trials 1 --db " + db() +
                          rpc("gpu", tracker));
  EXPECT_EQ(run.code, 2) << run.out << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << "one line: " << run.err;
  EXPECT_TRUE(contains(run.err, "no device matches target 'opencl:0:no-such-device'")) << run.err;
  EXPECT_TRUE(contains(run.err, "of key 'gpu'")) << run.err;
  EXPECT_TRUE(contains(run.err, opencl_.name)) << "names the devices the server has: " << run.err;
  EXPECT_FALSE(contains(slurp(server.log), "measured")) << "nothing was uploaded";
  EXPECT_FALSE(server.process.poll()) << "the server keeps serving";
  // The same server still measures a target it has.
  CommandRun good = optune(std::string(kTinyOpenCLTune) + " --target opencl:0:0 --trials 1 --batch-size 1 --remeasure 0 "
                           "--db " + db() + rpc("gpu", tracker));
  EXPECT_EQ(good.code, 0) << good.err << slurp(server.log);
}

// A key should hold one kind of device. A server whose device for the target is not the task's
// (here: a task fingerprinted for another OpenCL device, and one for a device the server lacks)
// measures nothing: those candidates end as transport_error records naming why.
TEST_F(RpcOpenCLTest, ServerWithoutTheTasksDeviceMeasuresNothing) {
  auto& tracker = start_tracker();
  auto& server = start_opencl_server("gpu", tracker.port);
  auto make_task = [&](const std::string& target, kernels::DeviceInfo device) {
    auto task = std::make_shared<measure::MeasureTask>();
    task->workload = kernels::parse_workload(kernels::Op::kGemm, "16,16,16");
    task->target = backends::parse_target(target);
    task->device = std::move(device);
    task->kernel_template = &backends::find_template("gemm.opencl");
    task->space = task->kernel_template->space(task->workload, task->device);
    return task;
  };
  kernels::DeviceInfo other = opencl_;
  other.name = "Some Other GPU";
  std::vector<std::shared_ptr<measure::MeasureTask>> tasks = {make_task("opencl", other),
                                                              make_task("opencl:0:no-such-device", opencl_)};
  std::vector<measure::MeasureInput> inputs;
  std::vector<measure::BuildResult> builds;
  for (const auto& task : tasks) {
    inputs.push_back({task, task->kernel_template->default_config(task->workload, task->device, task->space)});
    std::string artifact = (dir_ / ("candidate" + std::to_string(builds.size()) + ".json")).string();
    std::ofstream(artifact) << "{}";  // never uploaded: the device check comes first
    builds.push_back({artifact, measure::ErrorKind::kOk, "", 0});
  }
  measure::rpc::RpcRunnerOptions options;
  options.tracker = {"127.0.0.1", tracker.port};
  options.key = "gpu";
  options.lease_wait_seconds = 10;
  auto results = measure::rpc::RpcRunner(options).run(inputs, builds);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].error, measure::ErrorKind::kTransportError);
  EXPECT_TRUE(contains(results[0].message, "not on the task's Some Other GPU")) << results[0].message;
  EXPECT_EQ(results[1].error, measure::ErrorKind::kTransportError);
  EXPECT_TRUE(contains(results[1].message, "no device matches")) << results[1].message;
  EXPECT_FALSE(contains(slurp(server.log), "measured")) << slurp(server.log);
  EXPECT_FALSE(server.process.poll()) << slurp(server.log);
}

}  // namespace
