// tmap_spy: an experiment, not a benchmark of record (docs/perf-log.md, session 18). A CUPTI
// injection library that records how another library drives TMA: every cuTensorMapEncodeTiled
// call (all its arguments and the 128 bytes it wrote) and every kernel launch whose name contains
// a filter (grid, block, dynamic shared memory, launch attributes, and for each kernel parameter
// of 128 bytes the index of the recorded map it is byte-equal to). It answers "what boxes,
// swizzle, L2 promotion, cluster shape and scheduling policy does cuBLAS's kernel use", which the
// kernel's SASS cannot (the maps are parameters).
//   CUDA_INJECTION64_PATH=build/bench/experiments/libtmap_spy.so TMAP_SPY_FILTER=nvjet
//   TMAP_SPY_LAUNCHES=2 some_program ...      (one command line)
// Output goes to stderr (or to the file TMAP_SPY_OUT). Each kernel name is reported for its first
// TMAP_SPY_LAUNCHES launches (default 2).
#include <cuda.h>
#include <cupti.h>  // with generated_cuda_meta.h (the driver calls' parameter structs)

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

std::mutex g_mutex;
FILE* g_out = stderr;
std::string g_filter = "nvjet";
int g_launches = 2;
std::vector<std::vector<unsigned char>> g_maps;  // every map encoded so far, in order
std::map<std::string, int> g_seen;               // launches reported per kernel name

void print_map_args(const cuTensorMapEncodeTiled_params* p, CUresult status) {
  const int n = static_cast<int>(g_maps.size());
  std::fprintf(g_out, "[tmap_spy] encode #%d status=%d dtype=%d rank=%u addr=%p dims=", n,
               static_cast<int>(status), static_cast<int>(p->tensorDataType), p->tensorRank,
               p->globalAddress);
  for (cuuint32_t i = 0; i < p->tensorRank; ++i)
    std::fprintf(g_out, "%s%llu", i ? "," : "", static_cast<unsigned long long>(p->globalDim[i]));
  std::fprintf(g_out, " strides_bytes=");
  for (cuuint32_t i = 0; i + 1 < p->tensorRank; ++i)
    std::fprintf(g_out, "%s%llu", i ? "," : "",
                 static_cast<unsigned long long>(p->globalStrides[i]));
  std::fprintf(g_out, " box=");
  for (cuuint32_t i = 0; i < p->tensorRank; ++i)
    std::fprintf(g_out, "%s%u", i ? "," : "", p->boxDim[i]);
  std::fprintf(g_out, " elem_strides=");
  for (cuuint32_t i = 0; i < p->tensorRank; ++i)
    std::fprintf(g_out, "%s%u", i ? "," : "", p->elementStrides[i]);
  std::fprintf(g_out, " interleave=%d swizzle=%d l2promo=%d oobfill=%d\n",
               static_cast<int>(p->interleave), static_cast<int>(p->swizzle),
               static_cast<int>(p->l2Promotion), static_cast<int>(p->oobFill));
}

void print_params(CUfunction f, void** params);

void print_launch(const char* name, const cuLaunchKernelEx_params* p) {
  const CUlaunchConfig* c = p->config;
  std::fprintf(g_out,
               "[tmap_spy] launch %s grid=(%u,%u,%u) block=(%u,%u,%u) smem=%u attrs=%u:", name,
               c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
               c->sharedMemBytes, c->numAttrs);
  for (unsigned i = 0; i < c->numAttrs; ++i) {
    const CUlaunchAttribute& a = c->attrs[i];
    std::fprintf(g_out, " [id=%d", static_cast<int>(a.id));
    switch (a.id) {
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        std::fprintf(g_out, " cluster=(%u,%u,%u)", a.value.clusterDim.x, a.value.clusterDim.y,
                     a.value.clusterDim.z);
        break;
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        std::fprintf(g_out, " policy=%d",
                     static_cast<int>(a.value.clusterSchedulingPolicyPreference));
        break;
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
        std::fprintf(g_out, " pdl=%d", a.value.programmaticStreamSerializationAllowed);
        break;
      default: {
        unsigned v[4];
        std::memcpy(v, &a.value, sizeof v);
        std::fprintf(g_out, " raw=%08x,%08x,%08x,%08x", v[0], v[1], v[2], v[3]);
      }
    }
    std::fprintf(g_out, "]");
  }
  std::fprintf(g_out, "\n");
  print_params(p->f, p->kernelParams);
}

void print_params(CUfunction f, void** params) {
  if (params == nullptr) return;
  for (cuuint32_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    if (cuFuncGetParamInfo(f, i, &offset, &size) != CUDA_SUCCESS) break;
    std::fprintf(g_out, "[tmap_spy]   param %u offset %zu size %zu", i, offset, size);
    const auto* bytes = static_cast<const unsigned char*>(params[i]);
    if (size == 128) {
      int match = -1;
      for (std::size_t m = g_maps.size(); m-- > 0;)
        if (std::memcmp(g_maps[m].data(), bytes, 128) == 0) {
          match = static_cast<int>(m);
          break;
        }
      std::fprintf(g_out, " = encode #%d", match);
    } else if (size <= 64) {
      std::fprintf(g_out, " bytes=");
      for (size_t b = 0; b < size; ++b)
        std::fprintf(g_out, "%02x", bytes[b]);
    }
    std::fprintf(g_out, "\n");
  }
}

void CUPTIAPI callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  std::lock_guard<std::mutex> lock(g_mutex);
  if (id == CUPTI_DRIVER_TRACE_CBID_cuTensorMapEncodeTiled &&
      info->callbackSite == CUPTI_API_EXIT) {
    const auto* p = static_cast<const cuTensorMapEncodeTiled_params*>(info->functionParams);
    print_map_args(p, *static_cast<const CUresult*>(info->functionReturnValue));
    const auto* bytes = reinterpret_cast<const unsigned char*>(p->tensorMap);
    g_maps.emplace_back(bytes, bytes + 128);
  } else if (id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx &&
             info->callbackSite == CUPTI_API_ENTER) {
    const char* name = info->symbolName ? info->symbolName : "?";
    if (std::strstr(name, g_filter.c_str()) == nullptr) return;
    if (g_seen[name]++ >= g_launches) return;
    print_launch(name, static_cast<const cuLaunchKernelEx_params*>(info->functionParams));
  } else if (id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel &&
             info->callbackSite == CUPTI_API_ENTER) {
    const char* name = info->symbolName ? info->symbolName : "?";
    if (std::strstr(name, g_filter.c_str()) == nullptr) return;
    if (g_seen[name]++ >= g_launches) return;
    const auto* p = static_cast<const cuLaunchKernel_params*>(info->functionParams);
    std::fprintf(g_out,
                 "[tmap_spy] launch (cuLaunchKernel) %s grid=(%u,%u,%u) block=(%u,%u,%u) smem=%u\n",
                 name, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,
                 p->blockDimZ, p->sharedMemBytes);
    print_params(p->f, p->kernelParams);
  }
  std::fflush(g_out);
}

}  // namespace

extern "C" int InitializeInjection() {
  if (const char* f = std::getenv("TMAP_SPY_FILTER")) g_filter = f;
  if (const char* n = std::getenv("TMAP_SPY_LAUNCHES")) g_launches = std::atoi(n);
  if (const char* o = std::getenv("TMAP_SPY_OUT"))
    if (FILE* f = std::fopen(o, "w")) g_out = f;
  CUpti_SubscriberHandle subscriber;
  if (cuptiSubscribe(&subscriber, callback, nullptr) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "[tmap_spy] cuptiSubscribe failed (is another CUPTI client attached?)\n");
    return 0;
  }
  cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                      CUPTI_DRIVER_TRACE_CBID_cuTensorMapEncodeTiled);
  cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx);
  cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  std::fprintf(g_out, "[tmap_spy] attached (filter \"%s\", %d launches per kernel)\n",
               g_filter.c_str(), g_launches);
  return 1;
}
