#!/usr/bin/env python3
"""One row of the GPU check's table (scripts/gpu-check.sh): gpubench eager and graph mode beside
PyTorch eager and torch.compile (scripts/torch_reference.py; for the fine-tuning models, Hugging
Face transformers + peft, scripts/hf_reference.py, in the "pt eager" column) for one benchmark,
and the ratios gpubench eager / PyTorch eager and gpubench graph / best PyTorch.
Usage: gpu_check_row.py header
       gpu_check_row.py row LABEL KIND=PATH...   (KIND: eager, graph, pt, pt-compile, pt-reduce-overhead)
       gpu_check_row.py losses EAGER_JSON GRAPH_JSON   (exit 1 unless final losses agree within 1e-3)
       gpu_check_row.py inference LABEL RESULT_JSON   (throughput, latency, generation's figures)
       gpu_check_row.py memory LABEL FIT_JSON RESULT_JSON   (fit's prediction against the run's peak,
                                                             the verdict per card, a batch search)"""
import json
import os
import sys

KINDS = ("eager", "graph", "pt", "pt-compile", "pt-reduce-overhead")
COLUMNS = (f"{'benchmark':30} {'eager':>9} {'graph':>9} {'pt eager':>9} {'pt compiled':>11} "
           f"{'eager/pt':>8} {'graph/best':>10} {'unit':11} {'peak GiB':>8}  status")


def load(path):
    if not path or not os.path.exists(path):
        return None
    try:
        return json.load(open(path))
    except ValueError:
        return None


def gpubench_throughput(result):
    if result is None or result.get("status") != "ok":
        return None
    return result["metrics"]["throughput"]


def status_of(kind, result):
    if result is None:
        return f"{kind}: no result"
    if result.get("status") == "ok":
        return None
    error = (result.get("error") or "").splitlines()
    return f"{kind}: {result.get('status')}: {error[0][:100] if error else ''}"


def cell(value, width):
    return f"{value:{width}.1f}" if value else f"{'-':>{width}}"


def row(label, paths):
    eager, graph = load(paths.get("eager")), load(paths.get("graph"))
    pt = load(paths.get("pt"))
    compiled = [load(paths.get(k)) for k in ("pt-compile", "pt-reduce-overhead")]
    ours_eager, ours_graph = gpubench_throughput(eager), gpubench_throughput(graph)
    pt_eager = pt.get("throughput") if pt else None
    pt_compiled = max([c["throughput"] for c in compiled if c] or [0]) or None
    best_pt = max(v for v in (pt_eager, pt_compiled, 0) if v is not None) or None
    eager_ratio = f"{ours_eager / pt_eager:8.3f}" if ours_eager and pt_eager else f"{'-':>8}"
    graph_ratio = f"{ours_graph / best_pt:10.3f}" if ours_graph and best_pt else f"{'-':>10}"
    first = eager or graph or {}
    metrics = first.get("metrics", {})
    peak = metrics.get("peak_memory_bytes")
    notes = [s for s in (status_of(k, load(paths[k])) for k in ("eager", "graph") if k in paths) if s]
    if eager and eager.get("benchmark", {}).get("optimizer_impl"):
        optimizer = (eager["benchmark"].get("optimizer") or "SGD").split()[0]
        notes.append(f"{eager['benchmark']['optimizer_impl']} {optimizer}")
    if pt and pt.get("peak_memory_bytes"):
        notes.append(f"pt peak {pt['peak_memory_bytes'] / 2**30:.1f} GiB")
    for key in ("params", "trainable_params"):
        ours = eager.get("benchmark", {}).get(key) if eager else None
        if pt and pt.get(key) and ours and pt[key] != ours:
            notes.append(f"{key.upper()} DIFFER: gpubench {ours}, pt {pt[key]}")
    if graph and graph.get("metrics", {}).get("graph_capture_ms"):
        notes.append(f"capture {graph['metrics']['graph_capture_ms']:.0f} ms")
    if metrics.get("skipped_steps"):
        notes.append(f"{metrics['skipped_steps']} fp16 steps skipped")
    distributed = first.get("distributed", {})
    if distributed.get("backend") not in (None, "none"):
        notes.append(f"{distributed['backend']} x{distributed['world_size']}, {distributed['buckets']} buckets, "
                     f"exposed comm {distributed['exposed_communication_ms']:.2f} ms/step")
    for kind, result in zip(("pt-compile", "pt-reduce-overhead"), compiled):
        if result and result.get("warmup_s"):
            notes.append(f"{kind} warm-up {result['warmup_s']:.0f} s")
    return (f"{label:30} {cell(ours_eager, 9)} {cell(ours_graph, 9)} {cell(pt_eager, 9)} "
            f"{cell(pt_compiled, 11)} {eager_ratio} {graph_ratio} {metrics.get('throughput_unit', ''):11} "
            f"{peak / 2**30 if peak else 0:8.1f}  {'; '.join(notes) or 'ok'}" + telemetry_line(eager))


def telemetry_line(result):
    """The eager run's power, energy, clocks, throttling and share of peak, on a line of its own."""
    if not result or result.get("status") != "ok":
        return ""
    telemetry = result.get("telemetry") or {}
    if not telemetry.get("available"):
        text = f"telemetry: none ({telemetry.get('reason', 'not recorded')})"
    else:
        s = telemetry.get("summary", {})
        reasons = ", ".join(f"{k} {100 * v:.0f}%" for k, v in s.get("throttle_reasons", {}).items())
        text = (f"telemetry: {s.get('mean_power_w', 0):.0f} W mean, {s.get('energy_per_sample_j', 0):.4f} "
                f"J/sample ({s.get('energy_source')}), SM {s.get('median_sm_clock_mhz', 0):.0f} MHz "
                f"(min {s.get('min_sm_clock_mhz', 0):.0f}), max {s.get('max_temperature_c', 0):.0f} C, "
                f"throttle: {reasons or 'none'}")
        if s.get("flags"):
            text += "; " + "; ".join(s["flags"])
    fraction = result.get("metrics", {}).get("achieved_fraction_of_peak")
    datasheet = result.get("datasheet") or {}
    text += (f"; {100 * fraction:.1f}% of {datasheet.get('entry')} {datasheet.get('peak_quantity')}"
             if fraction else f"; datasheet: {datasheet.get('reason', 'not recorded')}")
    return "\n" + " " * 32 + text


def losses(eager_path, graph_path):
    eager, graph = load(eager_path), load(graph_path)
    if not (eager and graph and eager.get("status") == graph.get("status") == "ok"):
        print("graph vs eager losses: a run failed or is missing")
        return 1
    a, b = eager["metrics"]["final_loss"], graph["metrics"]["final_loss"]
    difference = abs(a - b) / max(abs(a), 1e-12)
    ok = difference <= 1e-3
    print(f"graph vs eager losses after the same steps from one seed: {a:.6f} vs {b:.6f}, "
          f"relative difference {difference:.2e} ({'ok' if ok else 'FAIL'}: limit 1e-3)")
    return 0 if ok else 1


def size(n):
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def inference(label, result_path):
    result = load(result_path)
    if not result or result.get("status") != "ok":
        return f"{label}: " + (status_of("infer", result) or "no result")
    m = result["metrics"]
    i = m.get("inference", {})
    lat = i.get("request_latency_ms", {})
    parts = [f"{m['throughput']:.1f} {m['throughput_unit']}",
             f"latency p50 {lat.get('p50', 0):.2f} ms p90 {lat.get('p90', 0):.2f} "
             f"p99 {lat.get('p99', 0):.2f} max {lat.get('max', 0):.2f}"]
    if i.get("kv_cache_bytes"):
        ttft, tpot = i["time_to_first_token_ms"], i["time_per_output_token_ms"]
        parts.append(f"prefill {i['prefill_tokens_per_second']:.0f} tokens/sec, decode "
                     f"{i['decode_tokens_per_second']:.1f} tokens/sec")
        parts.append(f"TTFT p50 {ttft['p50']:.2f} ms, TPOT p50 {tpot['p50']:.2f} p99 {tpot['p99']:.2f} ms")
        parts.append(f"KV cache {size(i['kv_cache_bytes'])} "
                     f"({i['kv_cache_bytes_per_token']} B/token), "
                     f"{'REALLOCATED' if i.get('kv_cache_reallocated') else 'never reallocated'}")
    parts.append(f"peak {size(m.get('memory', {}).get('peak_bytes', 0))}")
    return f"{label}: " + "; ".join(parts)


def memory(label, fit_path, result_path):
    fit, result = load(fit_path), load(result_path)
    parts = []
    if fit:
        parts.append(f"fit predicts {size(fit['predicted_peak_bytes'])}")
    else:
        parts.append("fit: no prediction")
    if result and result.get("status") == "ok":
        measured = result["metrics"]["memory"]["peak_bytes"]
        parts.append(f"the run peaked at {size(measured)} "
                     f"({result['metrics']['memory'].get('peak_source', '')})")
        if fit:
            parts.append(f"predicted / measured {fit['predicted_peak_bytes'] / measured:.3f}")
    else:
        parts.append(status_of("run", result) or "run: no result")
    search = (result or {}).get("batch_search")
    if search:
        parts.append(f"batch max: predicted {search.get('predicted_batch')}, found "
                     f"{search.get('found_batch')} under {size(search.get('memory_limit_bytes', 0))}")
    for card in (fit or {}).get("cards", []):
        verdict = "fits" if card["fits"] else "does not fit"
        parts.append(f"{card['name']}: {verdict}, largest batch {card['max_batch']}")
    return f"{label}: " + "; ".join(parts)


if __name__ == "__main__":
    if sys.argv[1:2] == ["header"]:
        print(COLUMNS)
    elif sys.argv[1:2] == ["row"] and len(sys.argv) >= 3:
        paths = dict(arg.split("=", 1) for arg in sys.argv[3:])
        unknown = set(paths) - set(KINDS)
        if unknown:
            sys.exit(f"unknown kind(s) {sorted(unknown)}; known: {', '.join(KINDS)}")
        print(row(sys.argv[2], paths))
    elif sys.argv[1:2] == ["inference"] and len(sys.argv) == 4:
        print(inference(sys.argv[2], sys.argv[3]))
    elif sys.argv[1:2] == ["memory"] and len(sys.argv) == 5:
        print(memory(sys.argv[2], sys.argv[3], sys.argv[4]))
    elif sys.argv[1:2] == ["losses"] and len(sys.argv) == 4:
        sys.exit(losses(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
