// tmakit ops (internal): the GEMM's GPC-aware worker order, the host side (plain C++; the host
// tests check it). docs/perf-log.md, sessions 19, 21, 23 and 24.
//
// Why. In a wave of data-parallel tiles, worker w computes cluster tile t = j W + w (W workers,
// gemm_schedule.hpp), and the grouped raster (raster_tile) puts tile t on cluster row t mod R of
// its group (R = the raster group in cluster rows). So the workers that are congruent modulo R
// read the same A tiles at about the same time. The L2's request coalescer merges identical reads
// only among the SMs of one GPC (session 19: l2_merge), and where the launch puts cluster c
// (blockIdx.x / cluster_m) does not follow w mod R. The order below gives the clusters that the
// hardware places in one GPC workers of one residue class. Measured on the H100 (session 23, the
// same order from a Python prototype): the 128 x 128 ping-pong's k-loop at 2048^3 from 552-583 to
// 522 cycles per k-block; the plan's launches +2.1-4.4% on the K = 2048 shapes.
//
// How. gemm_order.cu measures two things: once per device, which SMs share a GPC (CTAs of
// clusters of 16, which the hardware keeps in one GPC, joined by union-find: sm_groups); once per
// cluster size, shared-memory size and grid size, on which SMs a one-wave launch of the GEMM's
// shape puts each cluster (cluster_groups; a smaller grid is not placed like the first clusters
// of a larger one, session 24, so each grid size is measured). gpc_worker_order turns that into
// Params::worker_of. Any permutation is correct (each worker's units are the same whichever cluster
// runs them); the measurement only decides how fast.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace tma::ops::detail::gemm {

// Params::worker_of's entries: launches with more workers run the identity past it.
inline constexpr int kWorkerMap = 256;
// A group of fewer SMs than this is not taken as a GPC: SMs that no cluster of 16 reached (on the
// H100 SXM of sessions 17-23, 16 SMs: 0, 1, 16, 17, 32, 33, 48, 49 and 124-131) end up alone.
inline constexpr int kMinGroupSms = 4;

// The SM groups of one or more launches of clusters whose CTAs share a GPC: `sm_of_cta` holds
// the SM (%smid) of each CTA, `cluster` consecutive CTAs per cluster. Returns, for SMs 0 .. sms
// - 1, the group (0, 1, ... in order of each group's lowest SM), or -1 for an SM of a group with
// fewer than kMinGroupSms SMs; empty when an SM id is outside [0, sms) or the sizes do not fit.
inline std::vector<int> sm_groups(const std::vector<int>& sm_of_cta, int cluster, int sms) {
  if (cluster < 1 || sms < 1 || sm_of_cta.size() % static_cast<std::size_t>(cluster) != 0)
    return {};
  for (int s : sm_of_cta)
    if (s < 0 || s >= sms) return {};
  std::vector<int> parent(static_cast<std::size_t>(sms));
  std::iota(parent.begin(), parent.end(), 0);
  const auto find = [&](int x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  for (std::size_t c = 0; c < sm_of_cta.size(); c += static_cast<std::size_t>(cluster))
    for (int r = 1; r < cluster; ++r) {
      const int a = find(sm_of_cta[c]), b = find(sm_of_cta[c + static_cast<std::size_t>(r)]);
      parent[std::max(a, b)] = std::min(a, b);  // the root stays the group's lowest SM
    }
  std::vector<int> size(static_cast<std::size_t>(sms), 0);
  for (int s = 0; s < sms; ++s)
    ++size[find(s)];
  std::vector<int> group(static_cast<std::size_t>(sms), -1), id(static_cast<std::size_t>(sms), -1);
  int next = 0;
  for (int s = 0; s < sms; ++s) {
    const int root = find(s);
    if (size[root] < kMinGroupSms) continue;
    if (id[root] < 0) id[root] = next++;
    group[s] = id[root];
  }
  return group;
}

// The group (sm_groups) of each cluster of a one-wave placement: `sm_of_cta` holds the SM of
// each CTA of a 1-D launch of clusters of `cluster_m`. -1 for a cluster on loose SMs. Empty when
// it is not the placement of one wave with one CTA per SM: an SM out of range or used twice, or
// the CTAs of one cluster in two groups (the hardware keeps a cluster inside one GPC).
inline std::vector<int> cluster_groups(const std::vector<int>& sm_of_cta, int cluster_m,
                                       const std::vector<int>& group_of_sm) {
  if (cluster_m < 1 || sm_of_cta.empty() ||
      sm_of_cta.size() % static_cast<std::size_t>(cluster_m) != 0)
    return {};
  std::vector<bool> used(group_of_sm.size(), false);
  std::vector<int> out;
  for (std::size_t c = 0; c < sm_of_cta.size(); c += static_cast<std::size_t>(cluster_m)) {
    int g = 0;
    for (int r = 0; r < cluster_m; ++r) {
      const int s = sm_of_cta[c + static_cast<std::size_t>(r)];
      if (s < 0 || static_cast<std::size_t>(s) >= group_of_sm.size() || used[s]) return {};
      used[s] = true;
      if (r == 0) {
        g = group_of_sm[s];
      } else if (group_of_sm[s] != g) {
        return {};
      }
    }
    out.push_back(g);
  }
  return out;
}

// The worker each cluster runs: a permutation perm of 0 .. W - 1 (W = cluster_group.size()),
// perm[c] = the worker of cluster c. Workers form `classes` residue classes (w mod classes: the
// raster group R). The groups (the loose clusters, -1, counted as one more group, as the session
// 23 prototype measured) in decreasing size (ties: first cluster first) each take the largest
// class left (ties: the lower residue) and give its workers, in increasing order, to their
// clusters in increasing order; a group larger than its class, and the groups left when the
// classes run out, leave their remaining clusters to take the unclaimed workers in increasing
// order. classes < 2: the identity (one class, nothing to gain).
inline std::vector<int> gpc_worker_order(const std::vector<int>& cluster_group, int classes) {
  const int workers = static_cast<int>(cluster_group.size());
  std::vector<int> perm(static_cast<std::size_t>(workers));
  std::iota(perm.begin(), perm.end(), 0);
  if (classes < 2 || workers < 2) return perm;
  // Groups, in order of their first cluster; each holds its clusters in increasing order.
  std::vector<int> keys;
  std::vector<std::vector<int>> members;
  for (int c = 0; c < workers; ++c) {
    const auto at = std::find(keys.begin(), keys.end(), cluster_group[c]);
    if (at == keys.end()) {
      keys.push_back(cluster_group[c]);
      members.push_back({c});
    } else {
      members[static_cast<std::size_t>(at - keys.begin())].push_back(c);
    }
  }
  std::vector<std::size_t> order(members.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return members[a].size() > members[b].size();
  });
  const int used_classes = std::min(classes, workers);
  std::vector<std::vector<int>> class_ids(static_cast<std::size_t>(used_classes));
  for (int w = 0; w < workers; ++w)
    class_ids[static_cast<std::size_t>(w % used_classes)].push_back(w);
  std::vector<bool> taken(class_ids.size(), false);
  std::vector<int> loose, free_ids;
  std::fill(perm.begin(), perm.end(), -1);
  for (const std::size_t gi : order) {
    const std::vector<int>& clusters = members[gi];
    int best = -1;
    for (int r = 0; r < used_classes; ++r)
      if (!taken[r] && (best < 0 || class_ids[r].size() > class_ids[best].size())) best = r;
    if (best < 0) {
      loose.insert(loose.end(), clusters.begin(), clusters.end());
      continue;
    }
    taken[best] = true;
    const std::vector<int>& ids = class_ids[best];
    const std::size_t n = std::min(ids.size(), clusters.size());
    for (std::size_t i = 0; i < n; ++i)
      perm[clusters[i]] = ids[i];
    loose.insert(loose.end(), clusters.begin() + static_cast<std::ptrdiff_t>(n), clusters.end());
    free_ids.insert(free_ids.end(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end());
  }
  for (int r = 0; r < used_classes; ++r)
    if (!taken[r]) free_ids.insert(free_ids.end(), class_ids[r].begin(), class_ids[r].end());
  std::sort(free_ids.begin(), free_ids.end());
  std::sort(loose.begin(), loose.end());
  for (std::size_t i = 0; i < loose.size(); ++i)
    perm[loose[i]] = free_ids[i];  // as many as there are: every worker is claimed once
  return perm;
}

// The identity order.
inline void identity_order(std::uint8_t* worker_of) {
  for (int i = 0; i < kWorkerMap; ++i)
    worker_of[i] = static_cast<std::uint8_t>(i);
}

// The device side (gemm_order.cu).
//
// Fills worker_of[0 .. kWorkerMap) for a launch of `workers` clusters of `cluster_m` CTAs with
// `smem` bytes of shared memory each (one CTA per SM) and a raster group of `classes` cluster
// rows: the GPC-aware order, or the identity when it cannot be had (workers > kWorkerMap, a
// probe failed, or `stream` is capturing before this device and cluster shape were measured).
// Returns whether the GPC-aware order was filled in. The first call per device, cluster_m, smem
// and worker count measures (probe_sm_groups once per device, probe_placement: short kernels on
// a private stream after `stream`'s pending work, and a host wait for them); later calls look the
// result up. Thread-safe; never throws (a failed probe clears its error and leaves the
// identity).
bool worker_order(std::uint8_t* worker_of, int workers, int cluster_m, std::uint32_t smem,
                  int classes, cudaStream_t stream);

// A 1-D launch of `clusters` clusters of `cluster` CTAs of `threads` threads and `smem` bytes of
// dynamic shared memory on `stream`: the cluster dimension in attr[0], one attribute (`attr`
// must outlive the launch; a caller may add more after it). The probes and the GEMM's own launch
// (gemm.cu: launch_config) build theirs with it.
cudaLaunchConfig_t cluster_config(int clusters, int cluster, int threads, std::size_t smem,
                                  cudaStream_t stream, cudaLaunchAttribute* attr);

// The measurements themselves, uncached (gpu tests). The SM group (sm_groups) of every SM of the
// current device, from clusters of 16 CTAs (8 where 16 is not allowed), launched after
// `stream`'s pending work; empty on failure.
std::vector<int> probe_sm_groups(cudaStream_t stream);
// How many clusters of `cluster_m` CTAs with 384 threads and `smem` bytes can be resident at once.
int probe_max_clusters(int cluster_m, std::uint32_t smem);
// The SM of each CTA of a 1-D launch of `clusters` clusters of `cluster_m` CTAs (384 threads,
// `smem` bytes each, as the GEMM), after `stream`'s pending work; empty on failure or when the
// CTAs were not all resident at once.
std::vector<int> probe_placement(int clusters, int cluster_m, std::uint32_t smem,
                                 cudaStream_t stream);

}  // namespace tma::ops::detail::gemm
