"""The timing the reference scripts share, gpubench's method: warm-up steps, then trials of
steps, each bounded by device synchronisations; samples per second of every trial. And how they
hand over what they measured."""
import ctypes
import ctypes.util
import json
import os
import time

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h


def backward_and_step(loss, optimizer, scaler):
    """The step's second half as gpubench's: backward and the optimiser's step, through the fp16
    GradScaler where there is one (it skips a step whose gradients overflowed)."""
    if scaler:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        optimizer.step()


def synchronizer(device):
    """What bounds a trial: a device synchronisation on CUDA, nothing on the CPU."""
    def synchronize():
        if device.type == "cuda":
            import torch
            torch.cuda.synchronize()
    return synchronize


def keep_freed_host_memory():
    """What gpubench does for CPU runs (src/memory/tensor_memory.h): glibc's malloc keeps freed
    tensor memory for reuse (mmap threshold at its 32 MiB maximum, no heap trimming) rather than
    returning it to the kernel and faulting it in again the next step. Both sides of a CPU
    comparison then run under the same allocator settings. A no-op without glibc, or with
    GPUBENCH_REFERENCE_DEFAULT_MALLOC=1 (PyTorch as a user runs it: scripts/parity.py --pytorch-malloc
    default)."""
    if os.environ.get("GPUBENCH_REFERENCE_DEFAULT_MALLOC") == "1":
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)
        libc.mallopt(M_TRIM_THRESHOLD, 2**31 - 1)
    except (OSError, AttributeError, TypeError):
        pass


def time_trials(step, synchronize, warmup_steps, steps, repeat, samples_per_step):
    """Returns (warm-up seconds, [samples/sec of each trial])."""
    warmup_start = time.perf_counter()
    for _ in range(warmup_steps):
        step()
    synchronize()
    warmup_s = time.perf_counter() - warmup_start
    trials = []
    for _ in range(repeat):
        synchronize()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        synchronize()
        trials.append(samples_per_step * steps / (time.perf_counter() - start))
    return warmup_s, trials


def profile_trial(step, synchronize, steps, samples_per_step, path, cuda):
    """gpubench's --profile: one more trial of `steps` steps under torch.profiler, after the timed
    trials, each step the range ProfilerStep#N; writes the Chrome trace to `path` and returns the
    profiled trial's samples per second (docs/profiling.md)."""
    from torch.profiler import ProfilerActivity, profile, record_function

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    synchronize()
    with profile(activities=activities, record_shapes=True) as profiler:
        start = time.perf_counter()
        for i in range(1, steps + 1):
            with record_function(f"ProfilerStep#{i}"):
                step()
        synchronize()
        seconds = time.perf_counter() - start
    profiler.export_chrome_trace(path)
    return samples_per_step * steps / seconds


def emit_result(result, output):
    """The result as one JSON line on stdout, and indented into `output` where one is given."""
    print(json.dumps(result))
    if output:
        with open(output, "w") as f:
            json.dump(result, f, indent=2)
