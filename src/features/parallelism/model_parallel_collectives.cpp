#include "features/parallelism/model_parallel_collectives.h"

#include <numeric>

namespace gpubench {
namespace {

// Gloo sums no bfloat16 or float16: such tensors travel as float32 and come back rounded.
bool needs_float(const torch::Tensor& tensor, const Collectives& group) {
  return group.backend() == "gloo" && tensor.is_floating_point() &&
         tensor.scalar_type() != torch::kFloat && tensor.scalar_type() != torch::kDouble;
}

// Gloo's worker threads are outside the caller's inference mode, where writing into an
// inference tensor is refused: under Gloo such a tensor (and a narrow one) travels as a copy made
// outside inference mode. NCCL takes it as it is.
bool needs_copy(const torch::Tensor& tensor, const Collectives& group) {
  return needs_float(tensor, group) || (group.backend() == "gloo" && tensor.is_inference());
}

torch::Tensor copy_for_gloo(const torch::Tensor& tensor, const Collectives& group) {
  const c10::InferenceMode outside(false);
  const torch::ScalarType type = needs_float(tensor, group) ? torch::kFloat : tensor.scalar_type();
  return tensor.to(type, /*non_blocking=*/false, /*copy=*/true);
}

}  // namespace

ModelParallelCollectives::ModelParallelCollectives(std::unique_ptr<Collectives> group)
    : group_(std::move(group)), waited_(group_->device()) {}

template <typename Collective>
void ModelParallelCollectives::timed(Collective&& collective) {
  waited_.begin();
  collective();
  waited_.end();
}

template <typename Reduce>
void ModelParallelCollectives::reduced(torch::Tensor& tensor, Reduce&& reduce) {
  timed([&] {
    if (!needs_copy(tensor, *group_)) {
      reduce(tensor).wait();
      return;
    }
    torch::Tensor copy = copy_for_gloo(tensor, *group_);
    reduce(copy).wait();
    tensor.copy_(copy);
  });
}

void ModelParallelCollectives::allreduce_sum(torch::Tensor& tensor) {
  reduced(tensor, [this](torch::Tensor& t) { return group_->allreduce_sum(t); });
}

void ModelParallelCollectives::allreduce_max(torch::Tensor& tensor) {
  reduced(tensor, [this](torch::Tensor& t) { return group_->allreduce_max(t); });
}

torch::Tensor ModelParallelCollectives::allgather_last_dim(const torch::Tensor& tensor) {
  std::vector<torch::Tensor> parts;
  timed([&] {
    if (!needs_copy(tensor, *group_)) {
      parts = group_->allgather(tensor);
      return;
    }
    const c10::InferenceMode outside(false);
    parts = group_->allgather(copy_for_gloo(tensor, *group_));
  });
  for (auto& part : parts) part = part.to(tensor.scalar_type());
  return torch::cat(parts, -1);
}

torch::Tensor ModelParallelCollectives::all_to_all(const torch::Tensor& rows,
                                                   const std::vector<int64_t>& send_counts,
                                                   const std::vector<int64_t>& receive_counts) {
  std::vector<int64_t> shape = rows.sizes().vec();
  shape[0] = std::accumulate(receive_counts.begin(), receive_counts.end(), int64_t{0});
  torch::Tensor received;
  timed([&] {
    const c10::InferenceMode outside(false);
    torch::Tensor input =
        needs_copy(rows, *group_) ? copy_for_gloo(rows, *group_) : rows.contiguous();
    torch::Tensor output = torch::empty(shape, input.options());
    group_->all_to_all(output, input, receive_counts, send_counts).wait();
    received = output;
  });
  return received.scalar_type() == rows.scalar_type() ? received : received.to(rows.scalar_type());
}

ModelParallelCollectives::Waited ModelParallelCollectives::take_waited() {
  const std::vector<double> intervals = waited_.take_ms();
  return {std::accumulate(intervals.begin(), intervals.end(), 0.0),
          static_cast<int64_t>(intervals.size())};
}

ParallelGroups split_world(Collectives& world, int group_size) {
  const int rank = world.rank(), replica = rank / group_size, slice = rank % group_size;
  std::vector<int> replica_ranks, slice_ranks;
  for (int r = 0; r < group_size; ++r) replica_ranks.push_back(replica * group_size + r);
  for (int r = slice; r < world.world_size(); r += group_size) slice_ranks.push_back(r);
  ParallelGroups groups;
  groups.model_parallel = std::make_unique<ModelParallelCollectives>(
      world.subgroup(replica_ranks, "tensor-parallel-" + std::to_string(replica)));
  groups.replicas = world.subgroup(slice_ranks, "data-parallel-" + std::to_string(slice));
  return groups;
}

}  // namespace gpubench
