#!/usr/bin/env python3
"""tools/scaling_model.py - how far one all-pairs simulation scales over hosts of 8 GPUs.

A model built from measured figures (docs/scaling.md names each one and where it was measured) and
stated assumptions about the interconnect. It prints a Markdown table of predicted step time,
efficiency and interactions/s for 1 to 64 hosts x 8 GPUs and N = 1M to 64M, and draws the
efficiency and the rate against the GPU count into a PNG.

    tools/scaling_model.py [--png docs/images/scaling.png] [--markdown]

One rank per host driving its 8 GPUs (mpirun -np H --map-by node), P = 8 H GPUs, n = N / P bodies each:
  compute   N n / R(n) + t_step               the fast kernel's measured rate for n bodies, and
                                              the measured per-step cost of a small step
  inside    a host: peer copies over NVLink (16 n bytes per GPU; measured: 1 rank x 2 GPUs
            loses nothing at N = 1M)
  between   hosts (H > 1): the slice to host memory (16 n bytes, PCIe), the all-gather
            (bandwidth-optimal: 16 N (H - 1) / H bytes into each host through its NICs, plus
            ceil(log2 H) latencies), and the other hosts' bodies into every GPU (16 N (H - 1) / H
            bytes, PCIe, each GPU on its own link)
  step      as built, the forces on the segments of a rank's own bodies (1 / H of the work) run
            while the exchange is in flight: max(own, exchange) + the other forces + t_step;
            without that overlap, compute + exchange
"""
import argparse
import math

# Measured on one H200 (docs/benchmarks.md, 2026-11-22): the fast kernel's interactions/s at N
# bodies on one GPU, taken as its rate for n bodies of its own, and the step time at small N.
MEASURED_RATE = {16384: 1.8575e12, 65536: 2.1119e12, 262144: 2.1768e12, 1048576: 2.2096e12}
T_STEP = 50.1e-6  # s: one step at N = 1,024 on one H200, all overhead

# Assumed interconnect (a typical 8 x H200 host): one 400 Gb/s NDR InfiniBand NIC per GPU.
NIC_BYTES_PER_S = 50e9   # per GPU, so 400 GB/s into a host
NIC_LATENCY = 2e-6       # s per message
PCIE_BYTES_PER_S = 50e9  # PCIe Gen5 x16, each direction
NVLINK_BYTES_PER_S = 450e9
GPUS_PER_HOST = 8
BYTES_PER_BODY = 16      # x, y, z, m in fp32


def rate(n):
    """The kernel's interactions/s for n bodies of its own against all N, assumed to be its measured
    one-GPU rate at N = n (interpolated in log n): a longer j loop only helps. Below the smallest
    measured size the rate falls in proportion to n: a GPU with fewer bodies of its own is assumed
    to take no less time than with 16,384 (pessimistic: the fast kernel spreads j over blocks)."""
    sizes = sorted(MEASURED_RATE)
    if n >= sizes[-1]:
        return MEASURED_RATE[sizes[-1]]
    if n <= sizes[0]:
        return MEASURED_RATE[sizes[0]] * n / sizes[0]
    for a, b in zip(sizes, sizes[1:]):
        if a <= n <= b:
            f = (math.log(n) - math.log(a)) / (math.log(b) - math.log(a))
            return MEASURED_RATE[a] + f * (MEASURED_RATE[b] - MEASURED_RATE[a])


def step(N, hosts):
    P = hosts * GPUS_PER_HOST
    n = N / P
    compute = N * n / rate(n) + T_STEP
    inside = BYTES_PER_BODY * n * (GPUS_PER_HOST - 1) / NVLINK_BYTES_PER_S
    between = 0.0
    if hosts > 1:
        out = BYTES_PER_BODY * n / PCIE_BYTES_PER_S
        gather = BYTES_PER_BODY * N * (hosts - 1) / hosts / (NIC_BYTES_PER_S * GPUS_PER_HOST)
        gather += math.ceil(math.log2(hosts)) * NIC_LATENCY
        back = BYTES_PER_BODY * N * (hosts - 1) / hosts / PCIE_BYTES_PER_S
        between = out + gather + back
    exchange = inside + between
    one_gpu = N * N / rate(N) + T_STEP
    kernel = compute - T_STEP
    # As built, a rank's forces start on the segments of its own bodies (1 / H of j) while the
    # exchange runs; the rest waits for it.
    own = kernel / hosts
    built = max(own, exchange) + (kernel - own) + T_STEP
    serial = kernel + exchange + T_STEP
    return {"P": P, "built": built, "serial": serial, "compute": compute, "exchange": exchange,
            "eff_built": one_gpu / (P * built), "eff_serial": one_gpu / (P * serial)}


SIZES = [1 << 20, 1 << 22, 1 << 24, 1 << 26]
HOSTS = [1, 2, 4, 8, 16, 32, 64]


def label(N):
    return f"{N >> 20}M"


def markdown():
    rows = ["| N | hosts x 8 GPUs | step (as built) | exchange | efficiency | interactions/s | without overlap: efficiency |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for N in SIZES:
        for H in HOSTS:
            s = step(N, H)
            rows.append(f"| {label(N)} | {H} x 8 | {s['built'] * 1e3:.3g} ms | {s['exchange'] * 1e3:.3g} ms | "
                        f"{100 * s['eff_built']:.0f}% | {N * N / s['built']:.3g} | {100 * s['eff_serial']:.0f}% |")
    return "\n".join(rows)


def plot(path):
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("scaling_model.py: needs matplotlib (Debian: python3-matplotlib; or a Python that has it)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for N in SIZES:
        gpus = [H * GPUS_PER_HOST for H in HOSTS]
        built = [step(N, H) for H in HOSTS]
        line, = a.plot(gpus, [100 * s["eff_built"] for s in built], "o-", label=f"N = {label(N)}")
        a.plot(gpus, [100 * s["eff_serial"] for s in built], "--", color=line.get_color(), alpha=0.6)
        b.plot(gpus, [N * N / s["built"] for s in built], "o-", color=line.get_color(), label=f"N = {label(N)}")
    ideal = [H * GPUS_PER_HOST * MEASURED_RATE[1048576] for H in HOSTS]
    b.plot([H * GPUS_PER_HOST for H in HOSTS], ideal, "k:", label="ideal (2.21e12 per GPU)")
    for ax in (a, b):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("GPUs (hosts x 8 H200)")
        ax.grid(True, which="both", alpha=0.3)
    a.set_ylabel("parallel efficiency (%)")
    a.set_ylim(0, 105)
    a.set_title("Efficiency: as built (solid), without overlap (dashed)")
    b.set_yscale("log")
    b.set_ylabel("interactions / s")
    b.set_title("Rate, as built")
    a.legend(fontsize=8)
    b.legend(fontsize=8)
    fig.suptitle("nbody over MPI: model from measured H200 figures, assumed 400 Gb/s NIC per GPU", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--png", help="write the plot here")
    ap.add_argument("--markdown", action="store_true", help="print the table")
    args = ap.parse_args()
    if args.markdown or not args.png:
        print(markdown())
    if args.png:
        plot(args.png)
