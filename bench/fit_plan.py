#!/usr/bin/env python3
"""Scores (and refits) the GEMM plan heuristic against a `tma-bench gemm --sweep` record.

    python3 bench/fit_plan.py SWEEP.json [--binary SESSION] [--check] [--grid] [--top N]
                                         [--block-cost2 X] [--block-cost1 X] [--handoff X]
                                         [--gain X] [--configs N] [--pingpong-rule R]
                                         [--one-wave-rule R] [--full-wave-rule R]

SWEEP.json is what `tma-bench gemm --no-ordinary --sweep --json SWEEP.json` wrote: every shape
timed with every variant (tma_cfgC_clK: configuration C data-parallel in clusters of K;
tma_cfgC_sk / _sk2: split, clusters of 1 / 2) next to cuBLASLt and the heuristic's own choice
("tma").

The script holds a replica of the plan (src/ops/gemm_config.hpp: choose_config,
choose_cluster_m, choose_stream_k_cluster_m, choose_plan; src/ops/gemm_schedule.hpp:
make_schedule, stream_k_fits, data_parallel_time, stream_k_time) with the cost constants as
parameters (defaults: the ones in the source). It prints

  - for each shape the replica's choice, the variant that was fastest, and the choice's time as a
    fraction of the fastest ("quality"); with the constants of the binary that ran the sweep, the
    replica's choices must be the ones that binary made (its "tma" entry's detail): the script
    checks that and says where they differ (then the replica is out of date: fix it first);
  - the mean quality, and the geomean ratio to cuBLASLt that the choices would give on the two
    sets of the GEMM target (squares >= 2048; LLM shapes with M >= 1024), next to the same for
    the best variant of every shape (the oracle: what any plan could reach on this sweep);
  - with --grid, the constants on a grid ranked by mean quality.

--check exits 1 when a choice differs from the binary's (the CPU tests run it on every recorded
H100 and H200 sweep with --binary of its session). Those tests compare the replica
with recorded binaries: a later change to the C++ plan shows here only once a sweep of the new
binary is recorded, so change both together.

The record's "tma" entry may come from a binary with other rules or constants than the current
source: --binary SESSION (BINARIES below: s6, s7, s8, s10, s20, s24, s27, s28, s38, s39, s40,
s44, the default and the current source) sets what that session's binary had, and each option after it overrides one
setting (e.g. new constants, to score a refit). The history: session 6's binary ran with
--block-cost2 1.3 --block-cost1 1.6 --handoff 2 --gain 0.95; the binaries of sessions 6 and 7
had the first 4 configurations (--configs 4); session 8 added the widths 224, 240 and 176
(--configs 7); session 10 the 128 x 176 ping-pong (--configs 8), which the plan chooses from
session 20 on for K <= 2048 with at least 4 waves of its tiles (--pingpong-rule s20), and from
session 24 on, with the 128 x 128 ping-pong, for K <= 8192 (--pingpong-rule s24). Session 24's
last build added the one-wave rule (one wave of 128 x 256 tiles at K <= 2048 -> 128 x 128 tiles:
--one-wave-rule s24, the cooperative; from session 27 s27, the ping-pong with a column-major B)
and session 27 the full-wave rule (no split when the data-parallel plan's last wave is at least
95% full: --full-wave-rule on). Session 28 added configuration 8 (128 x 144) and the 144 rule
(one wave of its cluster tiles at >= 90% of the clusters: data-parallel on it; --configs 8 turns
it off). Session 30 added configuration 9 (128 x 136), taken before 144 by the same rule from
K >= 4096, and session 37 let it take two waves (--waves136 2; 1 in sessions 30-36, 0 before).
Session 39 added configuration 10 (256 x 64 tiles with swapped operands, ping-pong) and the swap
rule (full waves of its tiles with fewer outputs per CTA, K >= 7168, plain products with A
row-major and B column-major: the sweeps' bf16 products; --configs 10 turns it off). Session 40
added the long-K split rule (the 128 x 256 split in clusters of 2 for K >= 4096 with >= 5 waves of
its cluster tiles, in place of the 128 x 176 ping-pong or of a 128 x 256 data-parallel plan whose
last wave is <= 80% full; --long-split-rule off turns it off). Session 44 let the swap rule
apply only on a GPU with at least 4,000 GB/s of DRAM bandwidth (the record's
peak_bandwidth_gbps: the H200, not the H100; --swap-min-gbps 0 applies it everywhere).
Session 27's sweep is bench/results/h100-2026-11-27-s27-gemm-sweep.json; session 38's
(bench/results/h200-2026-11-28-s38-gemm-sweep.json, the 33 target shapes on an H200) checks the
source of that session; session 39's record (bench/results/h200-2026-11-28-s39-plan-check.json:
the 47 shapes of the README's command, each with two variants beside the plan) that session's,
session 40's (...-s40-plan-check.json, H200) its own, and session 44's
(bench/results/h100-2026-12-05-s44-plan-check.json, H100) the current source's.
"""

import argparse
import itertools
import json
import math
import re
import sys

from issue_sets import issue_set

# src/ops/gemm_config.hpp and include/tma/ops/gemm.hpp (kGemmConfigs: block_n, ping-pong).
BLOCK_M = 128
BLOCK_K = 64
CONFIG_BLOCK_N = [256, 128, 128, 192, 224, 240, 176, 176, 144, 136, 64]
CONFIG_BLOCK_M = [128] * 10 + [256]
CONFIG_PINGPONG = [False, False, True, False, False, False, False, True, False, False, True]
FIT_CONFIGS = [3, 4, 5, 6]  # gemm_config.hpp: kFitConfigs
NARROW_TILE_TIME = 0.64
TILE192_TIME = 0.75
TILE_FIT_GAIN = 0.95
TILE176_RATE = 0.95
MIN_STREAM_K_BLOCKS = 32
# The ping-pong rule (gemm_config.hpp: kWidePingPongConfig, kNarrowPingPongConfig,
# kPingPongMaxKBlocks, kPingPongMinHalfWaves, kPingPong176Time). --pingpong-rule s24 (the
# default, session 24): config 7 or 2 for K <= 8192 with at least 3.5 waves and a column-major
# B, the shorter by the wave model, when at least 3% shorter than the cooperative choice (in
# waves x columns); s20: config 7 for K <= 2048 with at
# least 4 waves (sessions 20-23); off: none (the binaries before session 20).
WIDE_PINGPONG_CONFIG = 7
NARROW_PINGPONG_CONFIG = 2
PINGPONG_RULE = ["s24"]
PINGPONG_MAX_K_BLOCKS = {"s20": 32, "s24": 128}
PINGPONG_176_TIME = 0.985
PINGPONG_GAIN = 0.97
# The one-wave rule: "s27" (the default, session 27 on: the 128 x 128 ping-pong with a
# column-major B, the cooperative otherwise), "s24" (sessions 24-26: the cooperative), "off"
# (the binaries before it).
ONE_WAVE_RULE = ["s27"]
# The full-wave rule (session 27 on); --full-wave-rule off for the binaries before it.
FULL_WAVE_RULE = [True]
FULL_WAVE_SHARE = 0.95
# The 144 rule (gemm_config.hpp: kConfig144, kWave144Share; session 28 on): one wave of 128 x 144
# cluster tiles at >= 90% of the clusters, where the data-parallel choice gives each worker more
# columns -> configuration 8 in clusters of 2, data-parallel. Binaries without configuration 8
# (--configs 8 or fewer) do not have it.
CONFIG144 = 8
WAVE144_SHARE = 0.9
# Configuration 9 (128 x 136; session 30 on) in the same rule, tried before 144, from K >= 4096
# (kOneWave136MinKBlocks) and for up to WAVES136 waves of its cluster tiles, the last one as full
# (kWaves136: 1 in sessions 30-36, 2 from session 37; 0: the binaries without it).
CONFIG136 = 9
ONE_WAVE136_MIN_K_BLOCKS = 64
WAVES136 = [2]
# The swap rule (gemm_config.hpp: kSwapConfig, kSwapMinKBlocks, kSwapMaxWaves; session 39 on):
# configuration 10 in clusters of 1, data-parallel, for a plain product with A row-major and B
# column-major (every sweep's bf16 product in layout rc), K >= 7168, when its tiles fill at most
# two waves, the last >= 90%, with fewer outputs per CTA than the choice so far. Binaries without
# configuration 10 (--configs 10 or fewer) do not have it.
SWAP_CONFIG = 10
SWAP_MIN_K_BLOCKS = 112
SWAP_MAX_WAVES = 2
# ... only on a GPU with at least this peak DRAM bandwidth in GB/s (kSwapMinMemoryGbps; session 44
# on: the H200's 4,814 has it, the H100 SXM's 3,352 not; 0 for the binaries of sessions 39-43,
# which swapped on every GPU). MEMORY_GBPS: the record's GPU (its "peak_bandwidth_gbps").
SWAP_MIN_GBPS = [4000.0]
MEMORY_GBPS = [0.0]
# The long-K split rule (gemm_config.hpp: kLongSplitMinKBlocks, kLongSplitMinWaves,
# kLongSplitLastWave; session 40 on): the 128 x 256 split in clusters of 2, K >= 4096, >= 5 waves
# of its cluster tiles, in place of the 128 x 176 ping-pong where its even share gives a CTA no
# more outputs than the ping-pong's waves, and of the 128 x 256 data-parallel plan whose last
# wave is <= 80% full. "off" for the binaries before session 40.
LONG_SPLIT_RULE = ["on"]
LONG_SPLIT_MIN_K_BLOCKS = 64
LONG_SPLIT_MIN_WAVES = 5.0
LONG_SPLIT_LAST_WAVE = 0.8
# Whether the sweep's B was column-major (K-major; the default layout rc): the s24 rule needs it.
K_MAJOR_B = [True]
K_MAJOR_A = [True]
# How many configurations the binary had (--configs): the plan considers only those.
CONFIGS = [len(CONFIG_BLOCK_N)]
# The cost constants (gemm_schedule.hpp, gemm_config.hpp) as the source has them now.
DEFAULTS = {"block_cost2": 1.1, "block_cost1": 1.5, "handoff": 6.0, "gain": 1.0}


def cdiv(a, b):
    return -(-a // b)


def tile_time(config):
    bn = CONFIG_BLOCK_N[config]
    if bn in (256, 192, 128):
        return 1.0 if bn == 256 else TILE192_TIME if bn == 192 else NARROW_TILE_TIME
    return bn / 256.0 / (TILE176_RATE if bn == 176 else 1.0)


def fit_configs():
    return [c for c in FIT_CONFIGS if c < CONFIGS[0]]


def choose_config(m, n, sms):
    def time(config):
        tiles = cdiv(m, BLOCK_M) * cdiv(n, CONFIG_BLOCK_N[config])
        return cdiv(tiles, sms) * tile_time(config)

    best = 1 if time(1) < time(0) else 0
    t_best = TILE_FIT_GAIN * time(best)
    for config in fit_configs():
        if time(config) < t_best:
            best, t_best = config, time(config)
    return best


def choose_cluster_m(tiles_m, tiles_n, sms):
    if tiles_m < 2:
        return 1
    pairs = max(sms // 2, 1)
    waves1 = cdiv(tiles_m * tiles_n, sms)
    waves2 = cdiv(cdiv(tiles_m, 2) * tiles_n, pairs)
    return 2 if waves2 <= waves1 else 1


def choose_stream_k_cluster_m(tiles_m):
    return 2 if tiles_m >= 2 and (tiles_m % 2 == 0 or tiles_m >= 8) else 1


def sk_tiles_of(tiles, workers):
    full, rem = divmod(tiles, workers)
    return workers if rem == 0 else rem + (workers if full >= 1 else 0)


def stream_k_fits(tiles, k_blocks, workers):
    return sk_tiles_of(tiles, workers) * k_blocks + k_blocks < 2**31


def data_parallel_time(tiles, k_blocks, workers):
    return cdiv(tiles, workers) * k_blocks


def stream_k_time(tiles, k_blocks, workers, block_n, block_cost, handoff):
    sk_tiles = sk_tiles_of(tiles, workers)
    dp_tiles = tiles - sk_tiles
    per_worker = cdiv(sk_tiles * k_blocks, workers)
    peers = cdiv(k_blocks, per_worker)
    partial_cost = handoff * block_n / 256.0
    return (dp_tiles // workers) * k_blocks + block_cost * per_worker + partial_cost * (1 + peers)


def choose_plan(m, n, k, sms, c):
    """(config, cluster_m, split) for the default request (every choice to the heuristic)."""
    tiles_m = cdiv(m, BLOCK_M)
    k_blocks = cdiv(k, BLOCK_K)

    def tiles_n(config):
        return cdiv(n, CONFIG_BLOCK_N[config])

    def tiles_of(plan):
        return cdiv(cdiv(m, CONFIG_BLOCK_M[plan[0]]), plan[1]) * tiles_n(plan[0])

    def workers_of(plan):
        return max(sms // plan[1], 1)

    def outputs_of(plan):  # a CTA's outputs over its waves (gemm_config.hpp: outputs_of)
        return (cdiv(tiles_of(plan), workers_of(plan)) * CONFIG_BLOCK_M[plan[0]] *
                CONFIG_BLOCK_N[plan[0]])

    dp_config = choose_config(m, n, sms)
    dp = (dp_config, choose_cluster_m(tiles_m, tiles_n(dp_config), sms), False)
    # The long-K split rule's split and a CTA's outputs under it (0: none).
    long_split, long_split_outputs = (0, choose_stream_k_cluster_m(tiles_m), True), 0.0
    if LONG_SPLIT_RULE[0] == "on" and K_MAJOR_B[0] and k_blocks >= LONG_SPLIT_MIN_K_BLOCKS:
        tiles, workers = tiles_of(long_split), workers_of(long_split)
        if (long_split[1] == 2 and tiles / workers >= LONG_SPLIT_MIN_WAVES and tiles <= 2**30
                and stream_k_fits(tiles, k_blocks, workers)):
            long_split_outputs = tiles / workers * BLOCK_M * CONFIG_BLOCK_N[0]
    rule = PINGPONG_RULE[0]
    if rule == "s20" and k_blocks <= PINGPONG_MAX_K_BLOCKS[rule] and WIDE_PINGPONG_CONFIG < CONFIGS[0]:
        pingpong = (WIDE_PINGPONG_CONFIG, 2, False)
        if tiles_of(pingpong) >= 4 * workers_of(pingpong):
            return pingpong
    if rule == "s24" and k_blocks <= PINGPONG_MAX_K_BLOCKS[rule] and K_MAJOR_B[0]:
        best_pp, t_pp = None, 0.0
        for config in (WIDE_PINGPONG_CONFIG, NARROW_PINGPONG_CONFIG):
            if config >= CONFIGS[0]:
                continue
            plan = (config, 2, False)
            tiles, workers = tiles_of(plan), workers_of(plan)
            if 2 * tiles < 7 * workers:
                continue
            per_column = PINGPONG_176_TIME if config == WIDE_PINGPONG_CONFIG else 1.0
            t = outputs_of(plan) * per_column
            if best_pp is None or t < t_pp:
                best_pp, t_pp = plan, t
        if best_pp is not None and t_pp <= PINGPONG_GAIN * outputs_of(dp):
            if (best_pp[0] == WIDE_PINGPONG_CONFIG and long_split_outputs > 0 and
                    long_split_outputs <= outputs_of(best_pp)):
                return long_split
            return best_pp
    # The one-wave rule (gemm_config.hpp: kOneWaveNarrowMaxKBlocks; session 24): one wave of
    # 128 x 256 tiles with K <= 2048 -> two waves of 128 x 128 tiles in clusters of 2 (session
    # 27 on: ping-pong with a column-major B).
    if (ONE_WAVE_RULE[0] != "off" and dp[0] == 0 and k_blocks <= 32 and tiles_m >= 2
            and tiles_of(dp) <= workers_of(dp)):
        narrow = (NARROW_PINGPONG_CONFIG if ONE_WAVE_RULE[0] == "s27" and K_MAJOR_B[0] else 1,
                  2, False)
        if tiles_of(narrow) <= 2 * workers_of(narrow):
            return narrow
    # The 144 rule (session 28 on), with 136 first (session 30 on).
    so_far, one_wave_rule = dp, False
    if K_MAJOR_B[0] and tiles_m >= 2:
        for config in (CONFIG136, CONFIG144):
            if config >= CONFIGS[0] or (config == CONFIG136 and (
                    WAVES136[0] == 0 or k_blocks < ONE_WAVE136_MIN_K_BLOCKS)):
                continue
            wave = (config, 2, False)
            tiles, workers = tiles_of(wave), workers_of(wave)
            waves = cdiv(tiles, workers)
            last = tiles - (waves - 1) * workers
            if (waves <= (WAVES136[0] if config == CONFIG136 else 1) and
                    last >= WAVE144_SHARE * workers and outputs_of(dp) > outputs_of(wave)):
                so_far, one_wave_rule = wave, True
                break
    # The swap rule (session 39 on).
    if (SWAP_CONFIG < CONFIGS[0] and K_MAJOR_A[0] and K_MAJOR_B[0] and
            k_blocks >= SWAP_MIN_K_BLOCKS and MEMORY_GBPS[0] >= SWAP_MIN_GBPS[0]):
        swap = (SWAP_CONFIG, 1, False)
        tiles, workers = tiles_of(swap), workers_of(swap)
        waves = cdiv(tiles, workers)
        last = tiles - (waves - 1) * workers
        if (waves <= SWAP_MAX_WAVES and last >= WAVE144_SHARE * workers and
                outputs_of(swap) < outputs_of(so_far)):
            return swap
    if one_wave_rule:
        return so_far
    if k_blocks < MIN_STREAM_K_BLOCKS:
        return dp
    # The full-wave rule (gemm_config.hpp: kFullWaveShare; session 27 on): no split when the
    # data-parallel plan's last wave is at least 95% full.
    tiles, workers = tiles_of(dp), workers_of(dp)
    last = tiles - (cdiv(tiles, workers) - 1) * workers
    if (long_split_outputs > 0 and dp[0] == 0 and dp[1] == 2 and
            last <= LONG_SPLIT_LAST_WAVE * workers):
        return long_split
    if FULL_WAVE_RULE[0]:
        if last >= FULL_WAVE_SHARE * workers:
            return dp

    t_dp = tile_time(dp[0]) * data_parallel_time(tiles_of(dp), k_blocks, workers_of(dp))
    best, t_best = dp, c["gain"] * t_dp
    for config in [0, 1] + fit_configs():
        sk = (config, choose_stream_k_cluster_m(tiles_m), True)
        sk_tiles = tiles_of(sk)
        if sk_tiles > 2**30 or not stream_k_fits(sk_tiles, k_blocks, workers_of(sk)):
            continue
        cost = c["block_cost2"] if sk[1] == 2 else c["block_cost1"]
        t_sk = tile_time(config) * stream_k_time(sk_tiles, k_blocks, workers_of(sk),
                                                 CONFIG_BLOCK_N[config], cost, c["handoff"])
        if t_sk < t_best:
            best, t_best = sk, t_sk
    return best


def variant_name(plan):
    config, cluster_m, split = plan
    if split:
        return "tma_cfg%d_%s" % (config, "sk2" if cluster_m == 2 else "sk")
    return "tma_cfg%d_cl%d" % (config, cluster_m)


DETAIL = re.compile(r"config (\d+) .*?cluster (\d+), .*?(data-parallel|stream-K)")


def recorded_plan(detail):
    match = DETAIL.search(detail)
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), match.group(3) == "stream-K"


def load(path):
    with open(path) as f:
        record = json.load(f)
    shapes = []
    for case in record["cases"]:
        imps = case["implementations"]
        times = {name: imp["median_ms"] for name, imp in imps.items()
                 if name.startswith("tma_cfg") and imp.get("median_ms")}
        if not times or "cublasLt" not in imps or "tma" not in imps:
            continue
        # The layout (A then B, r / c): B column-major is K-major (the default rc).
        K_MAJOR_B[0] = case.get("layout", "rc")[1:2] != "r"
        K_MAJOR_A[0] = case.get("layout", "rc")[0:1] != "c"
        shapes.append({
            "m": case["m"], "n": case["n"], "k": case["k"], "times": times,
            "cublas": imps["cublasLt"]["median_ms"], "tma": imps["tma"].get("median_ms"),
            "recorded": recorded_plan(imps["tma"].get("detail", "")),
        })
    MEMORY_GBPS[0] = record["gpu"].get("peak_bandwidth_gbps", 0.0)
    return record["gpu"]["sm_count"], shapes


def in_target(s):
    return issue_set(s["m"], s["n"], s["k"]) != "small"


def chosen_time(s, plan):
    """The time of `plan` at shape s: its variant's, or the plan's own ("tma") where the record
    timed only some variants beside it (e.g. --variants) and the binary chose `plan`."""
    t = s["times"].get(variant_name(plan))
    if t is None and plan == s["recorded"]:
        t = s["tma"]
    return t


def score(shapes, sms, c):
    """Mean quality, and geomean ratios to cuBLASLt (squares, LLM) of the choices and the oracle."""
    quality, ours, oracle = [], {True: [], False: []}, {True: [], False: []}
    for s in shapes:
        chosen = chosen_time(s, choose_plan(s["m"], s["n"], s["k"], sms, c))
        if chosen is None:
            return None
        best = min(min(s["times"].values()), chosen)
        quality.append(best / chosen)
        if in_target(s):
            square = s["m"] == s["n"] == s["k"]
            ours[square].append(s["cublas"] / chosen)
            oracle[square].append(s["cublas"] / best)

    def gm(xs):
        return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")

    return (sum(quality) / len(quality), min(quality), gm(ours[True]), gm(ours[False]),
            gm(oracle[True]), gm(oracle[False]))


# What each recorded sweep's binary had (its plan rules, configurations and cost constants), so
# that --binary SESSION checks the replica against it; "s44" is the current source. A new rule
# adds its setting here (off for the older binaries), not a flag to every test.
BINARIES = {
    "s6": dict(configs=4, pingpong_rule="off", one_wave_rule="off", full_wave_rule="off",
               block_cost2=1.3, block_cost1=1.6, handoff=2.0, gain=0.95),
    "s7": dict(configs=4, pingpong_rule="off", one_wave_rule="off", full_wave_rule="off"),
    "s8": dict(configs=7, pingpong_rule="off", one_wave_rule="off", full_wave_rule="off"),
    "s10": dict(configs=8, pingpong_rule="off", one_wave_rule="off", full_wave_rule="off"),
    "s20": dict(configs=8, pingpong_rule="s20", one_wave_rule="off", full_wave_rule="off"),
    "s24": dict(configs=8, pingpong_rule="s24", one_wave_rule="off", full_wave_rule="off"),
    "s27": dict(configs=8, waves136=0),
    "s28": dict(configs=9, waves136=0),
    "s38": dict(configs=10),
    "s39": dict(),
    "s40": dict(),
    "s44": dict(),
}
for _session in BINARIES:
    if _session not in ("s40", "s44"):
        BINARIES[_session].setdefault("long_split_rule", "off")
    if _session != "s44":
        BINARIES[_session].setdefault("swap_min_gbps", 0.0)
CURRENT = dict(configs=len(CONFIG_BLOCK_N), pingpong_rule="s24", one_wave_rule="s27",
               full_wave_rule="on", waves136=2, long_split_rule="on", swap_min_gbps=4000.0,
               **DEFAULTS)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sweep")
    ap.add_argument("--binary", choices=list(BINARIES), default="s44",
                    help="the session whose binary ran the sweep: its rules, configurations and "
                    "constants (default s44, the current source); the options below override them")
    for key in DEFAULTS:
        ap.add_argument("--" + key.replace("_", "-"), type=float, default=None)
    ap.add_argument("--grid", action="store_true", help="rank constants on a grid")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless every choice is the binary's (pass its constants)")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--configs", type=int, default=None,
                    help="configurations the sweep's binary had (4 before session 8)")
    ap.add_argument("--pingpong-rule", choices=["s24", "s20", "off"], default=None,
                    help="the ping-pong rule: s24 (session 24 on), s20 (sessions 20-23), off "
                    "(before session 20)")
    ap.add_argument("--one-wave-rule", choices=["s27", "s24", "off"], default=None,
                    help="the one-wave rule: s27 (session 27 on: the 128 x 128 ping-pong), s24 "
                    "(session 24's last build to session 26: the cooperative), off (before)")
    ap.add_argument("--full-wave-rule", choices=["on", "off"], default=None,
                    help="the full-wave rule (on from session 27; off before)")
    ap.add_argument("--long-split-rule", choices=["on", "off"], default=None,
                    help="the long-K split rule (on from session 40; off before)")
    ap.add_argument("--swap-min-gbps", type=float, default=None,
                    help="the DRAM bandwidth (GB/s) the swap rule needs (4000 from session 44, "
                    "0 before: every GPU)")
    ap.add_argument("--waves136", type=int, choices=[0, 1, 2], default=None,
                    help="waves of 128 x 136 cluster tiles the 144 rule takes (2 from session 37, "
                    "1 in sessions 30-36, 0: no configuration 9)")
    args = ap.parse_args()
    settings = dict(CURRENT, **BINARIES[args.binary])
    settings.update({k: v for k, v in vars(args).items() if k in settings and v is not None})
    ONE_WAVE_RULE[0] = settings["one_wave_rule"]
    FULL_WAVE_RULE[0] = settings["full_wave_rule"] == "on"
    CONFIGS[0] = settings["configs"]
    PINGPONG_RULE[0] = settings["pingpong_rule"]
    WAVES136[0] = settings["waves136"]
    LONG_SPLIT_RULE[0] = settings["long_split_rule"]
    SWAP_MIN_GBPS[0] = settings["swap_min_gbps"]
    c = {key: settings[key] for key in DEFAULTS}
    sms, shapes = load(args.sweep)
    if not shapes:
        sys.exit("fit_plan: no swept shapes in %s (run tma-bench gemm --sweep)" % args.sweep)

    print("constants: %s; %d shapes, %d SMs" % (c, len(shapes), sms))
    mismatches = 0
    for s in shapes:
        plan = choose_plan(s["m"], s["n"], s["k"], sms, c)
        best = min(s["times"], key=s["times"].get)
        chosen = chosen_time(s, plan)
        same = s["recorded"] == plan
        mismatches += not same
        print("  %5d x %5d x %5d  choice %-13s best %-13s quality %.3f%s" % (
            s["m"], s["n"], s["k"], variant_name(plan), best,
            s["times"][best] / chosen if chosen else float("nan"),
            "" if same else "  (the binary chose %s)" % (
                variant_name(s["recorded"]) if s["recorded"] else "?")))
    scored = score(shapes, sms, c)
    if scored is None:
        print("quality: not scored (the record did not time every choice)")
    else:
        q, q_min, sq, llm, o_sq, o_llm = scored
        print("quality: mean %.4f, worst %.3f; vs cuBLASLt (geomean): squares >= 2048 %.3f, LLM "
              "M >= 1024 %.3f; best variant of every shape: %.3f / %.3f" % (
                  q, q_min, sq, llm, o_sq, o_llm))
    if mismatches:
        print("%d of %d choices differ from the binary's: with the constants that binary was "
              "built with, that means the replica is out of date" % (mismatches, len(shapes)))
        if args.check:
            sys.exit(1)

    if args.grid:
        grid = {
            "block_cost2": [1.0, 1.05, 1.1, 1.15, 1.2, 1.3],
            "block_cost1": [1.3, 1.4, 1.5, 1.6],
            "handoff": [2.0, 3.0, 4.0, 5.0, 6.0, 8.0],
            "gain": [0.95, 0.98, 1.0],
        }
        results = []
        for values in itertools.product(*grid.values()):
            cc = dict(zip(grid.keys(), values))
            results.append((score(shapes, sms, cc), cc))
        results.sort(key=lambda r: -r[0][0])
        print("grid (%d points), best by mean quality:" % len(results))
        for (q, q_min, sq, llm, _, _), cc in results[:args.top]:
            print("  %.4f (worst %.3f; squares %.3f, LLM %.3f)  %s" % (q, q_min, sq, llm, cc))


if __name__ == "__main__":
    main()
