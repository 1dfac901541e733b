"""findings_bench — each benchmark's part of FINDINGS.md, one module a benchmark.

Tooling for every step. Owns the tables tools/findings.py reads: which
function makes a benchmark's rows (HANDLERS), which adds the runs' spread
to the rows a benchmark prints itself (SPREAD), and which rows read two
benchmarks' results (CROSS). Importing a module also registers its plots
(@plot, tools/findings_core.py). A benchmark with no entry here still gets
its printed rows (findings_core.h_generic).

A later step adds its benchmark as findings_bench/NAME.py (a handler
h_NAME(run, lines, bench) -> [Row], and any @plot functions beside it) and
one line below. Python 3 standard library only; single-threaded.

No Valkey anchor (tooling).
"""

from findings_bench import beside_valkey  # noqa: F401  (registers its plot; its rows it prints itself)
from findings_bench.big_values import s_big_values
from findings_bench.idle_memory import h_idle_memory
from findings_bench.ignition_timing import h_ignition_timing
from findings_bench.loadgen_sanity import h_loadgen_sanity
from findings_bench.main_cpu import h_main_cpu, x_main_cpu_amdahl
from findings_bench.p1_anatomy import h_p1_anatomy
from findings_bench.phase_shares import h_phase_shares
from findings_bench.pipeline_span import h_pipeline_span
from findings_bench.prefetch_e2e import s_prefetch_e2e
from findings_bench.prefetch_micro import h_prefetch_micro
from findings_bench.queues import h_queues
from findings_bench.server_vs_redis import h_server_vs_redis
from findings_bench.threads_vs_redis import h_threads_vs_redis
from findings_bench.trace_cost import h_trace_cost
from findings_bench.trace_runs import h_trace_runs
from findings_bench import watermark  # noqa: F401  (registers its plot; its rows it prints itself)
from findings_bench.write_cost import h_write_cost
from findings_bench.write_timing import h_write_timing
from findings_bench.zset_memory import h_zset_memory


# A benchmark's rows: fn(run, lines, bench) -> [Row].
HANDLERS = {
    "server_vs_redis": h_server_vs_redis,
    "server_vs_redis_pinned": h_server_vs_redis,
    "write_cost": h_write_cost,
    "pipeline_span": h_pipeline_span,
    "phase_shares": h_phase_shares,
    "write_timing": h_write_timing,
    "loadgen_sanity": h_loadgen_sanity,
    "idle_memory": h_idle_memory,
    "p1_anatomy": h_p1_anatomy,
    "queues": h_queues,
    "main_cpu": h_main_cpu,
    "threads_vs_redis": h_threads_vs_redis,
    "ignition_timing": h_ignition_timing,
    "prefetch_micro": h_prefetch_micro,
    "zset_memory": h_zset_memory,
    "trace_cost": h_trace_cost,
    "trace_runs": h_trace_runs,
}

# Benchmarks whose generic rows get the runs' spread: fn(lines, rows).
SPREAD = {"prefetch_e2e": s_prefetch_e2e, "big_values": s_big_values}

# Rows that read two benchmarks' results: fn(chosen) -> rows, none when
# either is absent.
CROSS = [x_main_cpu_amdahl]
