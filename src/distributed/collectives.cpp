#include "distributed/collectives.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <set>
#include <sstream>

#if GPUBENCH_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#if GPUBENCH_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#if GPUBENCH_WITH_CUDA && GPUBENCH_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "common/errors.h"
#include "common/log.h"
#include "common/stderr_capture.h"
#include "settings/setting_values.h"
#include "system/machine.h"
#include "system/system_probe.h"
#include "torch_support/compat.h"
#include "torch_support/device_timers.h"

namespace gpubench {

struct Collectives::State {
  LaunchEnvironment launch;  // this group's rank and size in place of the launch's
  std::chrono::milliseconds timeout{0};
  int rank = 0;
  int world_size = 1;
  int nodes = 1;
  std::string backend_name;
  torch::Device device = torch::kCPU;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<compat::CollectiveBackend> backend;
};

namespace {

// A TCPStore that never waits for a worker count: ranks find each other by their keys.
c10::intrusive_ptr<c10d::TCPStore> tcp_store(const std::string& host, int port, bool server,
                                             std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(port);
  options.isServer = server;
  options.waitWorkers = false;
  options.timeout = timeout;
  return c10::make_intrusive<c10d::TCPStore>(host, options);
}

c10::intrusive_ptr<c10d::Store> connect_store(const LaunchEnvironment& launch,
                                              std::chrono::milliseconds timeout) {
  auto store = tcp_store(launch.master_addr, launch.master_port,
                         launch.rank == 0 && !launch.store_hosted_by_launcher, timeout);
  // torchrun's agent store is shared with the agent: keep gpubench's keys apart.
  return c10::make_intrusive<c10d::PrefixStore>("gpubench", store);
}

// The distinct host names that `ranks` published (count_nodes).
int distinct_hosts(c10d::Store& store, const std::vector<int>& ranks) {
  std::set<std::string> hosts;
  for (int r : ranks) {
    const auto bytes = store.get("host/" + std::to_string(r));
    hosts.emplace(bytes.begin(), bytes.end());
  }
  return static_cast<int>(hosts.size());
}

// Every rank publishes its host name; the number of distinct names is the number of nodes.
int count_nodes(c10d::Store& store, int rank, int world_size) {
  const std::string mine = read_hostname();
  store.set("host/" + std::to_string(rank), std::vector<uint8_t>(mine.begin(), mine.end()));
  std::vector<int> ranks(static_cast<size_t>(world_size));
  std::iota(ranks.begin(), ranks.end(), 0);
  return distinct_hosts(store, ranks);
}

c10::intrusive_ptr<compat::CollectiveBackend> make_gloo(
    const c10::intrusive_ptr<c10d::Store>& store, const LaunchEnvironment& launch,
    std::chrono::milliseconds timeout) {
#if GPUBENCH_WITH_GLOO
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  options->threads = 2;
  if (!launch.gloo_interface.empty()) {
    options->devices.push_back(
        c10d::ProcessGroupGloo::createDeviceForInterface(launch.gloo_interface));
  } else if (launch.local_world_size == launch.world_size) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  } else {
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  }
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, launch.rank, launch.world_size,
                                                     options);
#else
  (void)store, (void)launch, (void)timeout;
  throw UsageError(
      "this gpubench was built without Gloo (gloo headers not found): CPU ranks "
      "are not available");
#endif
}

c10::intrusive_ptr<compat::CollectiveBackend> make_nccl(
    const c10::intrusive_ptr<c10d::Store>& store, const LaunchEnvironment& launch,
    std::chrono::milliseconds timeout) {
#if GPUBENCH_WITH_CUDA && GPUBENCH_WITH_NCCL
  // A collective that fails or outlives the timeout ends the process rather than hanging it;
  // a launcher's own setting wins.
  ::setenv(compat::kNcclAsyncErrorHandlingVariable, "1", 0);
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, launch.rank, launch.world_size,
                                                     options);
#else
  (void)store, (void)launch, (void)timeout;
  throw UsageError("this gpubench was built without NCCL: CUDA ranks are not available");
#endif
}

}  // namespace

Collectives::Collectives(std::unique_ptr<State> state) : state_(std::move(state)) {}
Collectives::~Collectives() = default;

std::unique_ptr<Collectives> Collectives::connect(const LaunchEnvironment& launch,
                                                  torch::Device device,
                                                  std::chrono::milliseconds timeout) {
  const auto join = [&] {
    auto state = std::make_unique<State>();
    state->launch = launch;
    state->timeout = timeout;
    state->rank = launch.rank;
    state->world_size = launch.world_size;
    state->device = device;
    state->store = connect_store(launch, timeout);
    state->nodes = count_nodes(*state->store, launch.rank, launch.world_size);
    auto group_store = c10::make_intrusive<c10d::PrefixStore>("group", state->store);
    if (device.is_cuda()) {
      state->backend = make_nccl(group_store, launch, timeout);
      state->backend_name = collective_backend_for(DeviceKind::kCuda);
    } else {
      state->backend = make_gloo(group_store, launch, timeout);
      state->backend_name = collective_backend_for(DeviceKind::kCpu);
    }
    return std::unique_ptr<Collectives>(new Collectives(std::move(state)));
  };
  // c10d writes a line to standard error for every retry of a master that does not answer; the
  // failure is gpubench's to report in one line (the caller's), and c10d's lines go to debug.
  StderrCapture c10d_lines;
  const auto log_c10d_lines = [&c10d_lines] {
    std::istringstream lines(c10d_lines.release());
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) log::debug("c10d while joining: {}", line);
    }
  };
  try {
    auto joined = join();
    log_c10d_lines();
    return joined;
  } catch (...) {
    log_c10d_lines();
    throw;
  }
}

std::unique_ptr<Collectives> Collectives::subgroup(const std::vector<int>& members,
                                                   const std::string& name) {
  const auto mine = std::find(members.begin(), members.end(), state_->rank);
  if (mine == members.end()) {
    throw std::logic_error("rank " + std::to_string(state_->rank) + " is not in group " + name);
  }
  auto state = std::make_unique<State>(*state_);
  state->rank = static_cast<int>(mine - members.begin());
  state->world_size = static_cast<int>(members.size());
  state->launch.rank = state->rank;
  state->launch.world_size = state->world_size;
  state->nodes = distinct_hosts(*state_->store, members);
  if (state->nodes == 1) state->launch.local_world_size = state->world_size;  // loopback
  auto group_store = c10::make_intrusive<c10d::PrefixStore>("group/" + name, state_->store);
  state->backend = state->device.is_cuda() ? make_nccl(group_store, state->launch, state->timeout)
                                           : make_gloo(group_store, state->launch, state->timeout);
  return std::unique_ptr<Collectives>(new Collectives(std::move(state)));
}

int Collectives::rank() const {
  return state_->rank;
}
int Collectives::world_size() const {
  return state_->world_size;
}
const std::string& Collectives::backend() const {
  return state_->backend_name;
}
int Collectives::nodes() const {
  return state_->nodes;
}
torch::Device Collectives::device() const {
  return state_->device;
}

PendingCollective Collectives::allreduce_sum(torch::Tensor& tensor) {
  std::vector<at::Tensor> tensors{tensor};
  auto work = state_->backend->allreduce(tensors);
  return PendingCollective([work, tensors] { work->wait(); });
}

PendingCollective Collectives::allreduce_max(torch::Tensor& tensor) {
  std::vector<at::Tensor> tensors{tensor};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::MAX;
  auto work = state_->backend->allreduce(tensors, options);
  return PendingCollective([work, tensors] { work->wait(); });
}

std::vector<torch::Tensor> Collectives::allgather(const torch::Tensor& tensor) {
  std::vector<at::Tensor> inputs{tensor};
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int r = 0; r < world_size(); ++r) outputs[0].push_back(torch::empty_like(tensor));
  state_->backend->allgather(outputs, inputs)->wait();
  return outputs[0];
}

PendingCollective Collectives::all_to_all(torch::Tensor& output, torch::Tensor& input,
                                          std::vector<int64_t> output_counts,
                                          std::vector<int64_t> input_counts) {
  auto work = state_->backend->alltoall_base(output, input, output_counts, input_counts);
  return PendingCollective([work, output, input] { work->wait(); });
}

PendingCollective Collectives::allgather_into(torch::Tensor& flat, const torch::Tensor& shard) {
  if (state_->backend_name == "nccl") {
    auto work = state_->backend->_allgather_base(flat, const_cast<torch::Tensor&>(shard));
    return PendingCollective([work, flat, shard] { work->wait(); });
  }
  // Gloo has no bf16: bf16 travels as float32 and is rounded back on arrival.
  const bool staged = shard.scalar_type() == torch::kBFloat16;
  torch::Tensor target =
      staged ? torch::empty(flat.sizes(), flat.options().dtype(torch::kFloat)) : flat;
  std::vector<at::Tensor> inputs{staged ? shard.to(torch::kFloat) : shard};
  std::vector<std::vector<at::Tensor>> outputs{target.chunk(world_size())};
  auto work = state_->backend->allgather(outputs, inputs);
  return PendingCollective([work, outputs, inputs, staged, target, flat] {
    work->wait();
    if (staged) {
      torch::NoGradGuard no_grad;
      flat.copy_(target);
    }
  });
}

PendingCollective Collectives::reduce_scatter_sum(torch::Tensor& shard, torch::Tensor& flat) {
  if (state_->backend_name == "nccl") {
    auto work = state_->backend->_reduce_scatter_base(shard, flat);
    return PendingCollective([work, shard, flat] { work->wait(); });
  }
  std::vector<at::Tensor> tensors{flat};
  auto work = state_->backend->allreduce(tensors);
  const int64_t offset = static_cast<int64_t>(rank()) * shard.numel();
  return PendingCollective([work, tensors, shard, offset]() mutable {
    work->wait();
    torch::NoGradGuard no_grad;
    shard.copy_(tensors[0].narrow(0, offset, shard.numel()));
  });
}

void Collectives::broadcast_from_rank0(std::vector<torch::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  // One flat buffer per dtype: a few large broadcasts instead of hundreds of small ones.
  std::map<at::ScalarType, std::vector<torch::Tensor*>> by_type;
  for (auto& tensor : tensors) by_type[tensor.scalar_type()].push_back(&tensor);
  for (auto& [type, group] : by_type) {
    std::vector<torch::Tensor> flat_parts;
    for (const auto* tensor : group) flat_parts.push_back(tensor->contiguous().view(-1));
    std::vector<at::Tensor> buffer{torch::cat(flat_parts)};
    // Gloo has no bfloat16 (LoRA's frozen base): a broadcast copies bits, so send them as bytes.
    std::vector<at::Tensor> sent{type == at::kBFloat16 ? buffer[0].view(at::kByte) : buffer[0]};
    state_->backend->broadcast(sent)->wait();
    int64_t offset = 0;
    for (auto* tensor : group) {
      tensor->copy_(buffer[0].narrow(0, offset, tensor->numel()).view(tensor->sizes()));
      offset += tensor->numel();
    }
  }
  synchronize_device(state_->device);
}

void Collectives::barrier() {
  auto token = torch::ones({1}, torch::TensorOptions().device(state_->device));
  allreduce_sum(token).wait();
  synchronize_device(state_->device);
}

namespace {
double reduce_scalar(compat::CollectiveBackend& backend, torch::Device device, double value,
                     c10d::ReduceOp op) {
  std::vector<at::Tensor> tensors{
      torch::full({1}, value, torch::TensorOptions().dtype(torch::kFloat64).device(device))};
  c10d::AllreduceOptions options;
  options.reduceOp = op;
  backend.allreduce(tensors, options)->wait();
  return tensors[0].item<double>();
}
}  // namespace

double Collectives::max_over_ranks(double value) {
  return reduce_scalar(*state_->backend, state_->device, value, c10d::ReduceOp::MAX);
}

double Collectives::sum_over_ranks(double value) {
  return reduce_scalar(*state_->backend, state_->device, value, c10d::ReduceOp::SUM);
}

std::vector<std::string> Collectives::gather_text(const std::string& text, size_t max_bytes) {
  const int64_t slot = static_cast<int64_t>(max_bytes) + 1;  // a zero byte ends each text
  std::vector<int32_t> bytes(static_cast<size_t>(world_size() * slot), 0);
  const size_t length = std::min(text.size(), max_bytes);
  for (size_t i = 0; i < length; ++i) {
    bytes[static_cast<size_t>(rank() * slot) + i] = static_cast<unsigned char>(text[i]);
  }
  std::vector<at::Tensor> tensors{
      torch::from_blob(bytes.data(), {world_size(), slot}, torch::kInt32)
          .clone()
          .to(state_->device)};
  state_->backend->allreduce(tensors, c10d::AllreduceOptions())->wait();
  const torch::Tensor gathered = tensors[0].to(torch::kCPU).contiguous();
  const int32_t* data = gathered.data_ptr<int32_t>();
  std::vector<std::string> texts;
  for (int r = 0; r < world_size(); ++r) {
    std::string out;
    for (int64_t i = 0; i < slot && data[r * slot + i] != 0; ++i) {
      out += static_cast<char>(data[r * slot + i]);
    }
    texts.push_back(out);
  }
  return texts;
}

void Collectives::shutdown() {
  if (!state_->backend) return;
  compat::shutdown_collective_backend(*state_->backend);
  state_->backend.reset();
}

struct RendezvousServer::State {
  c10::intrusive_ptr<c10d::TCPStore> store;
};

RendezvousServer::RendezvousServer(std::chrono::milliseconds timeout)
    : state_(std::make_unique<State>()) {
  state_->store = tcp_store("127.0.0.1", 0, true, timeout);  // port 0: the kernel picks one
}

RendezvousServer::~RendezvousServer() = default;

int RendezvousServer::port() const {
  return state_->store->getPort();
}

double allreduce_bus_factor(int ranks) {
  return ranks <= 1 ? 0.0 : 2.0 * (ranks - 1) / ranks;
}

torch::Device device_for_rank(DeviceKind kind, const LaunchEnvironment& launch) {
  if (kind != DeviceKind::kCuda) return torch::kCPU;
  const int count = read_machine_facts().cuda_device_count;
  const int index = count == 1 ? 0 : launch.local_rank;
  if (index >= count) {
    throw UsageError("local rank " + std::to_string(launch.local_rank) +
                     " has no CUDA device: " + std::to_string(count) + " visible");
  }
#if GPUBENCH_WITH_CUDA
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
#endif
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

}  // namespace gpubench
