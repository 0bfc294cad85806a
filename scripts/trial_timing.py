"""The timing both reference scripts share, gpubench's method: warm-up steps, then trials of
steps, each bounded by device synchronisations; samples per second of every trial."""
import time


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
