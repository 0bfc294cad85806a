#include "features/parallelism/sharded_data_parallel.h"

#include <cctype>
#include <stdexcept>
#include <unordered_set>

#include <torch/csrc/autograd/custom_function.h>

#include "torch_support/compat.h"

namespace gpubench {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

ShardMode shard_mode_from(const std::string& name) {
  if (name == "grads") return ShardMode::kGradients;
  if (name == "full") return ShardMode::kFull;
  if (name.empty() || name == "none") return ShardMode::kNone;
  throw std::invalid_argument("shard mode '" + name + "'");
}

std::string shard_unit_of(const std::string& parameter_name) {
  size_t start = 0;
  while (start < parameter_name.size()) {
    const size_t end = std::min(parameter_name.find('.', start), parameter_name.size());
    const std::string part = parameter_name.substr(start, end - start);
    if (!part.empty() && std::all_of(part.begin(), part.end(),
                                     [](unsigned char c) { return std::isdigit(c) != 0; })) {
      return parameter_name.substr(0, end);
    }
    start = end + 1;
  }
  return "";
}

struct ShardedDataParallel::Unit {
  std::string name;
  std::vector<std::string> parameter_names;
  std::vector<Tensor> parameters;  // the module's, views into `full`
  std::vector<int64_t> offsets;
  int64_t shard_numel = 0;  // the padded parameters' elements / ranks
  Tensor master;            // float32 [shard_numel]: this rank's slice, what the optimiser updates
  Tensor full;              // compute dtype [shard_numel x ranks], storage released while sharded
  bool gathered = false;
  std::optional<PendingCollective> gathering;
  Tensor gather_input;
  bool reduced = false;  // this step's gradients reduce-scattered (or on their way)
  std::optional<PendingCollective> reducing;
  Tensor reduce_input, reduce_output;

  // Parameter p's place in a flat buffer laid out as this unit's (`full`, or a float32 copy).
  Tensor slot_in(const Tensor& flat, size_t p) const {
    return flat.narrow(0, offsets[p], parameters[p].numel()).view(parameters[p].sizes());
  }
};

// Identity in forward; in backward, the owner's work for a block before its backward runs (tied
// to the block's output) or after it has run (tied to its input: its gradient is the block's
// last, and the parameters' gradients are accumulated before it, as FSDP2 relies on).
struct ShardedBackwardHooks {
  template <bool kBefore>
  class Hook : public torch::autograd::Function<Hook<kBefore>> {
   public:
    static Tensor forward(AutogradContext* ctx, const Tensor& x, int64_t owner, int64_t unit) {
      ctx->saved_data["owner"] = owner;
      ctx->saved_data["unit"] = unit;
      return x;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
      auto* owner = reinterpret_cast<ShardedDataParallel*>(ctx->saved_data["owner"].toInt());
      const auto unit = static_cast<size_t>(ctx->saved_data["unit"].toInt());
      if (kBefore) {
        owner->before_backward(unit);
      } else {
        owner->after_backward(unit);
      }
      return {grads[0], Tensor(), Tensor()};
    }
  };
};

ShardedDataParallel::ShardedDataParallel(torch::nn::Module& module, Collectives& group,
                                         ShardMode mode, torch::ScalarType compute_dtype)
    : group_(group),
      mode_(mode),
      compute_dtype_(compute_dtype),
      waits_in_passes_(group.device()),
      reduce_waits_(group.device()) {
  std::map<std::string, size_t> index_of;
  units_.push_back(std::make_unique<Unit>());
  index_of[""] = 0;
  std::unordered_set<const void*> seen;  // tied weights once
  for (const auto& item : module.named_parameters()) {
    if (!seen.insert(item.value().unsafeGetTensorImpl()).second) continue;
    const std::string name = shard_unit_of(item.key());
    auto [found, added] = index_of.emplace(name, units_.size());
    if (added) {
      units_.push_back(std::make_unique<Unit>());
      units_.back()->name = name;
    }
    Unit& unit = *units_[found->second];
    unit.parameter_names.push_back(item.key());
    unit.parameters.push_back(item.value());
  }
  for (const auto& item : module.named_modules()) {
    const auto found = index_of.find(item.key());
    if (found != index_of.end() && found->second > 0) {
      unit_of_block_[item.value().get()] = found->second;
    }
  }
  const int64_t ranks = group_.world_size();
  torch::NoGradGuard no_grad;
  for (auto& unit : units_) {
    int64_t numel = 0;
    for (const Tensor& parameter : unit->parameters) {
      unit->offsets.push_back(numel);
      numel += parameter.numel();
    }
    unit->shard_numel = (numel + ranks - 1) / ranks;
    const auto options = torch::TensorOptions().device(group_.device());
    Tensor flat = torch::zeros({unit->shard_numel * ranks}, options.dtype(torch::kFloat));
    for (size_t p = 0; p < unit->parameters.size(); ++p) {
      unit->slot_in(flat, p).copy_(unit->parameters[p]);
    }
    unit->master = flat.narrow(0, group_.rank() * unit->shard_numel, unit->shard_numel)
                       .clone()
                       .requires_grad_(true);
    unit->full = torch::empty({unit->shard_numel * ranks}, options.dtype(compute_dtype_));
    for (size_t p = 0; p < unit->parameters.size(); ++p) {
      Tensor& parameter = unit->parameters[p];
      parameter.set_data(unit->slot_in(unit->full, p));
    }
    if (mode_ == ShardMode::kGradients) {
      unit->full.copy_(flat);
      unit->gathered = true;
    } else {
      compat::release_storage(unit->full);
    }
  }
}

ShardedDataParallel::~ShardedDataParallel() = default;

std::vector<Tensor> ShardedDataParallel::optimized(std::vector<Tensor> /*trainable*/) {
  std::vector<Tensor> masters;
  for (const auto& unit : units_) masters.push_back(unit->master);
  return masters;
}

size_t ShardedDataParallel::unit_of(const torch::nn::Module& block) const {
  const auto found = unit_of_block_.find(&block);
  if (found == unit_of_block_.end()) {
    throw std::logic_error("sharded data parallelism: a block that is not one of its units");
  }
  return found->second;
}

void ShardedDataParallel::prefetch(size_t index) {
  Unit& unit = *units_[index];
  if (unit.gathered || unit.gathering) return;
  torch::NoGradGuard no_grad;
  if (unit.full.storage().nbytes() == 0) compat::reserve_storage(unit.full);
  unit.gather_input = unit.master.detach().to(compute_dtype_);
  unit.gathering = group_.allgather_into(unit.full, unit.gather_input);
}

void ShardedDataParallel::gather(size_t index) {
  Unit& unit = *units_[index];
  if (unit.gathered) return;
  prefetch(index);
  waits_in_passes_.begin();
  unit.gathering->wait();
  waits_in_passes_.end();
  unit.gathering.reset();
  unit.gather_input = Tensor();
  unit.gathered = true;
}

void ShardedDataParallel::release(size_t index) {
  Unit& unit = *units_[index];
  if (unit.gathering) gather(index);  // never free what a collective is writing
  if (!unit.gathered) return;
  compat::release_storage(unit.full);
  unit.gathered = false;
}

void ShardedDataParallel::begin_step() {
  gather(0);
  if (units_.size() > 1) prefetch(1);
}

Tensor ShardedDataParallel::before_block(const torch::nn::Module& block, const Tensor& hidden) {
  const size_t index = unit_of(block);
  gather(index);
  if (index + 1 < units_.size()) prefetch(index + 1);
  if (!torch::GradMode::is_enabled() || !hidden.requires_grad()) return hidden;
  return ShardedBackwardHooks::Hook<false>::apply(hidden, reinterpret_cast<int64_t>(this),
                                                  static_cast<int64_t>(index));
}

Tensor ShardedDataParallel::after_block(const torch::nn::Module& block, const Tensor& output) {
  const size_t index = unit_of(block);
  if (mode_ == ShardMode::kFull) release(index);
  if (!torch::GradMode::is_enabled() || !output.requires_grad()) return output;
  return ShardedBackwardHooks::Hook<true>::apply(output, reinterpret_cast<int64_t>(this),
                                                 static_cast<int64_t>(index));
}

void ShardedDataParallel::before_backward(size_t index) {
  gather(index);
  if (index > 1) prefetch(index - 1);
}

void ShardedDataParallel::after_backward(size_t index) {
  reduce_scatter(index);
  if (mode_ == ShardMode::kFull) release(index);
}

// The gradient the reduce-scatter of `index` brought into its master shard, its buffers freed.
void ShardedDataParallel::complete_reduce(size_t index) {
  Unit& unit = *units_[index];
  unit.reducing->wait();
  Tensor& gradient = unit.master.mutable_grad();
  if (gradient.defined()) {
    gradient.add_(unit.reduce_output);
  } else {
    gradient = unit.reduce_output;
  }
  unit.reducing.reset();
  unit.reduce_input = Tensor();
  unit.reduce_output = Tensor();
}

void ShardedDataParallel::reduce_scatter(size_t index) {
  Unit& unit = *units_[index];
  if (unit.reduced) return;
  unit.reduced = true;
  torch::NoGradGuard no_grad;
  // One reduce-scatter in flight, as FSDP2 keeps: the one before is completed first, so a rank
  // holds one unit's unsharded gradients at a time.
  if (!reduce_order_.empty() && units_[reduce_order_.back()]->reducing) {
    waits_in_passes_.begin();
    complete_reduce(reduce_order_.back());
    waits_in_passes_.end();
  }
  const int64_t ranks = group_.world_size();
  unit.reduce_input = torch::zeros({unit.shard_numel * ranks}, unit.master.options());
  for (size_t p = 0; p < unit.parameters.size(); ++p) {
    Tensor& gradient = unit.parameters[p].mutable_grad();
    if (!gradient.defined()) continue;
    unit.slot_in(unit.reduce_input, p).copy_(gradient);
    gradient.reset();
  }
  unit.reduce_input.div_(static_cast<double>(ranks));
  unit.reduce_output = torch::empty({unit.shard_numel}, unit.master.options());
  unit.reducing = group_.reduce_scatter_sum(unit.reduce_output, unit.reduce_input);
  reduce_order_.push_back(index);
}

void ShardedDataParallel::finish_step() {
  torch::NoGradGuard no_grad;
  // The root last, then any unit whose backward hook did not run (every rank runs the same
  // graph, so every rank issues them in the same order).
  for (size_t index = units_.size(); index-- > 0;) reduce_scatter(index);
  reduce_waits_.begin();
  for (size_t index : reduce_order_) {
    if (units_[index]->reducing) complete_reduce(index);
    units_[index]->reduced = false;
  }
  reduce_waits_.end();
  reduce_order_.clear();
  if (mode_ == ShardMode::kFull) {
    for (size_t index = 0; index < units_.size(); ++index) release(index);
  }
}

void ShardedDataParallel::after_update() {
  // `grads` keeps the storage and gathers the updated shards into it; `full` has released it.
  for (size_t index = 0; index < units_.size(); ++index) {
    Unit& unit = *units_[index];
    if (unit.gathering) gather(index);
    unit.gathered = false;
  }
}

void ShardedDataParallel::agree_on_found_inf(Tensor& found_inf) {
  group_.allreduce_max(found_inf).wait();
}

int64_t ShardedDataParallel::gradient_bytes() const {
  int64_t bytes = 0;
  for (const auto& unit : units_) bytes += unit->shard_numel * group_.world_size() * 4;
  return bytes;
}

int64_t ShardedDataParallel::gathered_bytes_per_step() const {
  const int64_t element = torch::elementSize(compute_dtype_);
  int64_t bytes = 0;
  for (size_t index = 0; index < units_.size(); ++index) {
    const int64_t gathers = mode_ == ShardMode::kFull && index > 0 ? 2 : 1;
    bytes += gathers * units_[index]->shard_numel * group_.world_size() * element;
  }
  return bytes;
}

std::vector<double> ShardedDataParallel::take_exposed_communication_ms() {
  return reduce_waits_.take_ms();
}

double ShardedDataParallel::take_exposed_in_passes_ms() {
  double total = 0;
  for (double ms : waits_in_passes_.take_ms()) total += ms;
  return total;
}

std::map<std::string, Tensor> ShardedDataParallel::gathered_parameters() {
  return gathered(false);
}

std::map<std::string, Tensor> ShardedDataParallel::gathered_gradients() {
  return gathered(true);
}

std::map<std::string, Tensor> ShardedDataParallel::gathered(bool gradients) {
  torch::NoGradGuard no_grad;
  std::map<std::string, Tensor> by_name;
  for (const auto& unit : units_) {
    Tensor flat = torch::empty({unit->shard_numel * group_.world_size()}, unit->master.options());
    group_.allgather_into(flat, gradients ? unit->master.grad() : unit->master.detach()).wait();
    for (size_t p = 0; p < unit->parameters.size(); ++p) {
      by_name[unit->parameter_names[p]] = unit->slot_in(flat, p).clone();
    }
  }
  return by_name;
}

}  // namespace gpubench
