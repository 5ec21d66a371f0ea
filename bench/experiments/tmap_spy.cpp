// tmap_spy: an experiment, not a benchmark of record (docs/perf-log.md, session 18). A CUPTI
// injection library that records how another library drives TMA: every cuTensorMapEncodeTiled
// call (its arguments, printed as a tmakit TensorMapSpec) and every kernel launch whose name
// contains a filter (grid, block, dynamic shared memory, launch attributes). It answers "does
// cuBLAS encode its maps through the driver, with what boxes, swizzle and L2 promotion, and with
// what cluster shape and attributes does it launch", which the kernel's SASS cannot. (It does not
// read kernel parameters: neither cuBLAS's nor tmakit's launches, as the runtime passes them,
// offered them to cuFuncGetParamInfo-based matching, session 18.)
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

#include "tma/host/spec.hpp"

namespace {

std::mutex g_mutex;
FILE* g_out = stderr;
std::string g_filter = "nvjet";
int g_launches = 2;
int g_encodes = 0;                  // encode calls so far
std::map<std::string, int> g_seen;  // launches reported per kernel name

// The encode call's arguments as tmakit's TensorMapSpec (its enums carry the driver's values:
// tma/host/tensor_map.hpp checks them), printed by tmakit's own one-line form.
void print_map_args(const cuTensorMapEncodeTiled_params* p, CUresult status) {
  tma::TensorMapSpec spec;
  spec.dtype = static_cast<tma::DataType>(p->tensorDataType);
  spec.rank = static_cast<int>(p->tensorRank);
  spec.address = p->globalAddress;
  for (int i = 0; i < spec.rank && i < tma::kMaxRank; ++i) {
    spec.dims_inner_first[i] = p->globalDim[i];
    if (i > 0) spec.strides_bytes_inner_first[i] = p->globalStrides[i - 1];
    spec.box_inner_first[i] = p->boxDim[i];
    spec.element_strides_inner_first[i] = p->elementStrides[i];
  }
  spec.interleave = static_cast<tma::Interleave>(p->interleave);
  spec.swizzle = static_cast<tma::Swizzle>(p->swizzle);
  spec.l2_promotion = static_cast<tma::L2Promotion>(p->l2Promotion);
  spec.oob_fill = static_cast<tma::OobFill>(p->oobFill);
  std::fprintf(g_out, "[tmap_spy] encode #%d status=%d %s\n", g_encodes, static_cast<int>(status),
               tma::to_string(spec).c_str());
}

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
}

// The name of a launch to report ("?" when CUPTI has none), or null: at the launch's entry, a
// name containing the filter, fewer than g_launches of that name reported.
const char* reported(const CUpti_CallbackData* info) {
  if (info->callbackSite != CUPTI_API_ENTER) return nullptr;
  const char* name = info->symbolName ? info->symbolName : "?";
  if (std::strstr(name, g_filter.c_str()) == nullptr) return nullptr;
  return g_seen[name]++ < g_launches ? name : nullptr;
}

void CUPTIAPI callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  std::lock_guard<std::mutex> lock(g_mutex);
  if (id == CUPTI_DRIVER_TRACE_CBID_cuTensorMapEncodeTiled &&
      info->callbackSite == CUPTI_API_EXIT) {
    const auto* p = static_cast<const cuTensorMapEncodeTiled_params*>(info->functionParams);
    print_map_args(p, *static_cast<const CUresult*>(info->functionReturnValue));
    ++g_encodes;
  } else if (id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx) {
    if (const char* name = reported(info))
      print_launch(name, static_cast<const cuLaunchKernelEx_params*>(info->functionParams));
  } else if (id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) {
    const char* name = reported(info);
    if (name == nullptr) return;
    const auto* p = static_cast<const cuLaunchKernel_params*>(info->functionParams);
    std::fprintf(g_out,
                 "[tmap_spy] launch (cuLaunchKernel) %s grid=(%u,%u,%u) block=(%u,%u,%u) smem=%u\n",
                 name, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,
                 p->blockDimZ, p->sharedMemBytes);
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
