// The ATen operators that a piece of code calls on this thread, through RecordFunction: every
// operator's name, and the launches a CUDA device would make for them. CUDA's rule, emulated on
// the CPU: an operator whose callees launch nothing launches a kernel itself unless it only makes a
// view, allocates, or converts to the type a tensor already has; an operator that CUDA runs as one
// kernel (operators_of_one_cuda_kernel) is one launch, whatever the CPU calls inside it.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include <ATen/record_function.h>

#include "kernels/fused_operators.h"

namespace gpubench::testing {

struct RecordedOperators {
  std::multiset<std::string> called;  // every operator, nested ones included
  std::vector<std::string> launches;  // in order, each with its outermost caller
};

// Launch no kernel: views, allocations, and the no-op forms of conversions (a `to` or
// `contiguous` that calls nothing returned its input).
inline const std::set<std::string>& operators_without_a_launch() {
  static const std::set<std::string> names = {
      "aten::alias",        "aten::as_strided",   "aten::chunk",       "aten::contiguous",
      "aten::detach",       "aten::empty",        "aten::empty_like",  "aten::empty_strided",
      "aten::expand",       "aten::lift_fresh",   "aten::narrow",      "aten::permute",
      "aten::reshape",      "aten::resize_",      "aten::result_type", "aten::select",
      "aten::slice",        "aten::split",        "aten::squeeze",     "aten::t",
      "aten::to",           "aten::transpose",    "aten::unbind",      "aten::unsqueeze",
      "aten::view",         "aten::resolve_conj", "aten::resolve_neg", "aten::_reshape_alias",
      "aten::_unsafe_view", "aten::set_",         "aten::expand_as",   "aten::view_as"};
  return names;
}

// One CUDA kernel (or one GEMM call) each, whatever their CPU implementation calls: a binary
// operator with a number (on the CPU a copy into a wrapped tensor first; CUDA passes the number
// as the kernel's argument), a reduction that the CPU splits into a fill and a sum, a GEMM after
// no-op conjugation checks, LibTorch 2.x's fused RMSNorm, whose CPU fallback is a dozen
// operators; and gpubench's own operators where the build compiled their CUDA kernels (as many
// launches as each makes, cuda_launches_of).
inline const std::set<std::string>& operators_of_one_cuda_kernel() {
  static const std::set<std::string> names = {"aten::mm",
                                              "aten::bmm",
                                              "aten::addmm",
                                              "aten::baddbmm",
                                              "aten::mean",
                                              "aten::sum",
                                              "aten::_softmax",
                                              "aten::cat",
                                              "aten::index_copy_",
                                              "aten::index_select",
                                              "aten::_fused_rms_norm",
                                              "aten::_weight_int4pack_mm",
                                              "aten::_weight_int8pack_mm",
                                              "aten::_scaled_mm"};
  static const std::set<std::string> with_own = [] {
    std::set<std::string> all = names;
    for (const kernels::OwnOperator& own : kernels::own_operators()) all.insert(own.name);
    return all;
  }();
  return kernels::has_cuda_kernels() ? with_own : names;
}

// The kernels CUDA launches for an operator of operators_of_one_cuda_kernel: one, or an own
// operator's count (decode attention's splits and their join).
inline int cuda_launches_of(const std::string& name) {
  if (!kernels::has_cuda_kernels()) return 1;
  for (const kernels::OwnOperator& own : kernels::own_operators()) {
    if (own.name == name) return own.cuda_launches;
  }
  return 1;
}

inline RecordedOperators record_operators(const std::function<void()>& body) {
  struct Frame {
    std::string name;
    bool launched = false;  // it, or an operator it called
  };
  static thread_local std::vector<Frame> stack;
  // "aten::copy_ in aten::to": the operator and the outermost one that called it.
  static const auto launch_name = [](const Frame& frame) {
    return stack.empty() ? frame.name : frame.name + " in " + stack.front().name;
  };
  static thread_local int atomic_depth = 0;
  static thread_local RecordedOperators* recording = nullptr;
  RecordedOperators recorded;
  recording = &recorded;
  stack.clear();
  atomic_depth = 0;
  const auto handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback(
          [](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
            const std::string name = fn.name();
            recording->called.insert(name);
            stack.push_back({name});
            if (atomic_depth > 0 || operators_of_one_cuda_kernel().count(name)) ++atomic_depth;
            return nullptr;
          },
          [](const at::RecordFunction&, at::ObserverContext*) {
            Frame frame = stack.back();
            stack.pop_back();
            if (atomic_depth > 0) {
              if (--atomic_depth > 0) return;  // inside a one-kernel operator
              for (int i = 0; i < cuda_launches_of(frame.name); ++i) {
                recording->launches.push_back(launch_name(frame));
              }
              frame.launched = true;
            } else if (!frame.launched && !operators_without_a_launch().count(frame.name)) {
              recording->launches.push_back(launch_name(frame));
              frame.launched = true;
            }
            if (frame.launched && !stack.empty()) stack.back().launched = true;
          })
          .scopes({at::RecordScope::FUNCTION}));
  body();
  at::removeCallback(handle);
  recording = nullptr;
  return recorded;
}

}  // namespace gpubench::testing
