// The API calls kept by default (--api launches), chosen by name from
// libcupti's own callback tables; libcupti answers without a GPU.
#include "capture/cupti/api_selection.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace magneton::capture {
namespace {

bool Has(const std::vector<CUpti_CallbackId>& ids, CUpti_CallbackId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST(ApiSelection, KeepsWorkWaitsAndPollsDropsSetup) {
  for (const char* kept : {"cudaLaunchKernel_v7000", "cuLaunchKernelEx", "cudaGraphLaunch_v10000", "cudaMemcpyAsync_v3020",
                           "cuMemcpyHtoDAsync_v2", "cudaMemsetAsync_v3020", "cudaStreamSynchronize_v3020",
                           "cuCtxSynchronize", "cudaMalloc_v3020", "cuMemAlloc_v2", "cudaFree_v3020",
                           "cudaEventQuery_v3020", "cuStreamQuery_ptsz"})
    EXPECT_TRUE(IsLaunchLikeApi(kept)) << kept;
  for (const char* dropped : {"cudaGetDevice_v3020", "cuGetProcAddress_v2", "cuDevicePrimaryCtxGetState",
                              "cudaGetLastError_v3020", "cudaStreamIsCapturing_v10000", "cuKernelGetName",
                              "cudaFuncSetAttribute_v9000", "cudaEventRecord_v3020"})
    EXPECT_FALSE(IsLaunchLikeApi(dropped)) << dropped;
}

TEST(ApiSelection, WaitsKeepWhatCanBlockTheHostNotLaunches) {
  for (const char* kept : {"cudaStreamSynchronize_v3020", "cuCtxSynchronize", "cudaMemcpyAsync_v3020", "cuMemcpyDtoH_v2",
                           "cudaMalloc_v3020", "cudaFree_v3020", "cudaEventQuery_v3020", "cudaEventSynchronize_v3020"})
    EXPECT_TRUE(IsWaitLikeApi(kept)) << kept;
  for (const char* dropped : {"cudaLaunchKernel_v7000", "cuLaunchKernelEx", "cudaGraphLaunch_v10000",
                              "cudaMemsetAsync_v3020", "cudaGetDevice_v3020", "cudaEventRecord_v3020"})
    EXPECT_FALSE(IsWaitLikeApi(dropped)) << dropped;
  auto waits = SelectedApis(CUPTI_CB_DOMAIN_RUNTIME_API, ApiCalls::kWaits);
  auto launches = SelectedApis(CUPTI_CB_DOMAIN_RUNTIME_API, ApiCalls::kLaunches);
  EXPECT_TRUE(Has(waits, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020));
  EXPECT_FALSE(Has(waits, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  for (auto id : waits) EXPECT_TRUE(Has(launches, id)) << id;  // a subset of the launches' selection
  EXPECT_LT(waits.size(), launches.size());
}

TEST(ApiSelection, ARecordingPassKeepsTheLaunchesAMeasuredPassOnlyTheWaits) {
  EXPECT_EQ(RecorderApiCalls(/*ops=*/true, /*fingerprints=*/false), ApiCalls::kAll);
  EXPECT_EQ(RecorderApiCalls(true, true), ApiCalls::kAll);
  // The launches' external correlation links kernels to operators: a
  // recording pass without them had every kernel unlinked.
  EXPECT_EQ(RecorderApiCalls(false, true), ApiCalls::kLaunches);
  EXPECT_EQ(RecorderApiCalls(false, false), ApiCalls::kWaits);
}

TEST(ApiSelection, PollsAreTheStreamAndEventQueries) {
  for (const char* poll : {"cudaStreamQuery_v3020", "cudaStreamQuery_ptsz_v7000", "cudaEventQuery_v3020", "cuStreamQuery",
                           "cuEventQuery"})
    EXPECT_TRUE(IsPollingApi(poll)) << poll;
  for (const char* other : {"cudaEventSynchronize_v3020", "cudaGetLastError_v3020", "cudaPointerGetAttributes_v4000",
                            "cuDeviceGetAttribute"})
    EXPECT_FALSE(IsPollingApi(other)) << other;
}

TEST(ApiSelection, CallbackIdsComeFromLibcuptiNames) {
  auto runtime = SelectedApis(CUPTI_CB_DOMAIN_RUNTIME_API, ApiCalls::kLaunches);
  EXPECT_TRUE(Has(runtime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  EXPECT_TRUE(Has(runtime, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
  EXPECT_TRUE(Has(runtime, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020));
  EXPECT_FALSE(Has(runtime, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
  auto driver = SelectedApis(CUPTI_CB_DOMAIN_DRIVER_API, ApiCalls::kLaunches);
  EXPECT_TRUE(Has(driver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  EXPECT_FALSE(Has(driver, CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2));
  // A small share of each table: most API functions are queries and setup.
  EXPECT_LT(runtime.size(), CUPTI_RUNTIME_TRACE_CBID_SIZE / 3);
  EXPECT_LT(driver.size(), CUPTI_DRIVER_TRACE_CBID_SIZE / 3);
  EXPECT_TRUE(SelectedApis(CUPTI_CB_DOMAIN_NVTX, ApiCalls::kLaunches).empty());
}

TEST(ApiSelection, ParsesTheCommandLineNames) {
  ApiCalls a = ApiCalls::kNone;
  ASSERT_TRUE(ParseApiCalls("all", &a));
  EXPECT_EQ(a, ApiCalls::kAll);
  ASSERT_TRUE(ParseApiCalls("launches", &a));
  EXPECT_EQ(a, ApiCalls::kLaunches);
  EXPECT_FALSE(ParseApiCalls("some", &a));
  EXPECT_EQ(a, ApiCalls::kLaunches);
  ASSERT_TRUE(ParseApiCalls("waits", &a));
  EXPECT_EQ(a, ApiCalls::kWaits);
  EXPECT_STREQ(ApiCallsName(ApiCalls::kNone), "none");
}

}  // namespace
}  // namespace magneton::capture
