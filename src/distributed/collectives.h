// The process group of a data-parallel run, through LibTorch's c10d: NCCL between CUDA devices,
// Gloo between CPU ranks, rendezvous through a TCPStore.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "distributed/launch_environment.h"
#include "settings/setting_values.h"

namespace gpubench {

// An asynchronous collective in flight. wait() blocks the host on Gloo; on NCCL it makes the
// current CUDA stream wait, without blocking the host.
class PendingCollective {
 public:
  explicit PendingCollective(std::function<void()> wait) : wait_(std::move(wait)) {}
  void wait() { wait_(); }

 private:
  std::function<void()> wait_;
};

class Collectives {
 public:
  // Connects this rank to the others (blocks until all have joined or `timeout` passes). The
  // same timeout bounds every later collective, so a dead or hung peer fails this rank.
  static std::unique_ptr<Collectives> connect(const LaunchEnvironment& launch, torch::Device device,
                                              std::chrono::milliseconds timeout);
  // Without shutdown() first (a failed run), the backend's communicators are torn down by its
  // destructor or by the process's end.
  ~Collectives();

  int rank() const;
  int world_size() const;
  const std::string& backend() const;  // "gloo" or "nccl"
  int nodes() const;                   // distinct hosts among the ranks
  torch::Device device() const;

  // The ranks `members` (ranks of this group, this one among them, in order) as a group of their
  // own over the same rendezvous, its ranks their places in `members`. Every member calls it with
  // the same members and `name`, and no other rank does.
  std::unique_ptr<Collectives> subgroup(const std::vector<int>& members, const std::string& name);

  PendingCollective allreduce_sum(torch::Tensor& tensor);  // in place, asynchronous
  PendingCollective allreduce_max(torch::Tensor& tensor);
  // Every rank's `tensor` (the same shape on each), in rank order.
  std::vector<torch::Tensor> allgather(const torch::Tensor& tensor);
  // Rows along dimension 0 (contiguous tensors): input_counts[p] rows of `input` to rank p,
  // output_counts[p] rows from rank p into `output`, in rank order.
  PendingCollective all_to_all(torch::Tensor& output, torch::Tensor& input,
                               std::vector<int64_t> output_counts,
                               std::vector<int64_t> input_counts);
  // Sharded data parallelism's pair, asynchronous, on flat contiguous tensors (`flat`: world
  // size x `shard`'s elements): every rank's `shard` into `flat` in rank order; and the sum over
  // the ranks of `flat`'s rank-th slice into `shard`. NCCL runs both as such; Gloo has no
  // reduce-scatter, so there it is an all-reduce of `flat` (in place) whose slice is copied out,
  // and bf16 travels as float32.
  PendingCollective allgather_into(torch::Tensor& flat, const torch::Tensor& shard);
  PendingCollective reduce_scatter_sum(torch::Tensor& shard, torch::Tensor& flat);
  void broadcast_from_rank0(std::vector<torch::Tensor>& tensors);
  void barrier();  // returns when every rank has reached it and this device is idle
  double max_over_ranks(double value);
  double sum_over_ranks(double value);
  // Every rank's text, in rank order, on every rank; each cut at max_bytes.
  std::vector<std::string> gather_text(const std::string& text, size_t max_bytes = 8192);
  // Ends the group cleanly once every rank has finished its collectives; call it only on a run
  // that succeeded (NCCL's finalize waits for the peers' outstanding work).
  void shutdown();

 private:
  struct State;
  explicit Collectives(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// The TCPStore server for ranks that this process launches, on a free loopback port (the
// kernel picks it, so no two runs collide). The ranks connect as clients.
class RendezvousServer {
 public:
  explicit RendezvousServer(std::chrono::milliseconds timeout);
  ~RendezvousServer();
  int port() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// bytes x 2(n-1)/n: what each rank sends in a ring all-reduce, nccl-tests' "bus bandwidth"
// factor, so that figures for different rank counts compare with the link's speed.
double allreduce_bus_factor(int ranks);

// This rank's device: the CUDA device of its local rank (or the only one visible, when the
// launcher binds one device to each task), made current; the CPU otherwise.
torch::Device device_for_rank(DeviceKind kind, const LaunchEnvironment& launch);

}  // namespace gpubench
