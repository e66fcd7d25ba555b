// device_model_cuda.cpp - device traits, the per-device model registry and
// the calibration's measurements (device_model_cuda.h).
#include "backend/cuda/device_model_cuda.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <vector>

#include "core/calibration_cache.h"
#include "xngemm.h"

namespace xn {

namespace {

#define XN_STR2(x) #x
#define XN_STR(x) XN_STR2(x)
constexpr const char *kLibraryVersion =
    XN_STR(XNGEMM_VERSION_MAJOR) "." XN_STR(XNGEMM_VERSION_MINOR) "." XN_STR(XNGEMM_VERSION_PATCH);

// One device's models: built-in always, calibrated once looked for.
struct DeviceEntry {
  std::shared_ptr<const DepthModel> builtin;
  std::shared_ptr<const DepthModel> calibrated;  // null: none valid
};

std::mutex g_models_mutex;
std::atomic<std::uint64_t> g_generation{1};
std::map<int, DeviceEntry> &models() {
  static std::map<int, DeviceEntry> m;
  return m;
}

std::string hex_uuid(const cudaUUID_t &u) {
  static const char *digits = "0123456789abcdef";
  std::string s;
  for (unsigned char c : u.bytes) {
    s += digits[c >> 4];
    s += digits[c & 15];
  }
  return s;
}

// The entry of `device`, built on first use. Caller holds g_models_mutex.
DeviceEntry &entry_of(int device) {
  auto it = models().find(device);
  if (it != models().end()) return it->second;
  DeviceEntry e;
  DeviceTraits traits;
  if (query_device_traits(device, &traits) == Status::Ok) {
    const DepthModel builtin = builtin_model(traits);
    e.builtin = std::make_shared<const DepthModel>(builtin);
    const DepthModel cal = load_calibrated_model(traits, kLibraryVersion, DepthModel{});
    if (cal.usable()) e.calibrated = std::make_shared<const DepthModel>(cal);
  } else {
    e.builtin = std::make_shared<const DepthModel>();
  }
  return models().emplace(device, std::move(e)).first->second;
}

}  // namespace

const char *library_version_text() { return kLibraryVersion; }

std::uint64_t depth_model_generation() { return g_generation.load(); }

Status query_device_traits(int device, DeviceTraits *t) {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    return Status::ExecutionFailed;
  }
  t->name = prop.name;
  t->uuid = hex_uuid(prop.uuid);
  t->cc_major = prop.major;
  t->cc_minor = prop.minor;
  t->sm_count = prop.multiProcessorCount;
  t->memory_bus_bits = prop.memoryBusWidth;
  t->l2_bytes = prop.l2CacheSize;
  t->memory_bytes = std::int64_t(prop.totalGlobalMem);
  int v = 0;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, device) == cudaSuccess)
    t->sm_clock_khz = v;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, device) == cudaSuccess)
    t->memory_clock_khz = v;
  if (cudaDriverGetVersion(&v) == cudaSuccess) t->driver_version = v;
  cudaGetLastError();
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
    t->blas_version = major * 10000 + minor * 100 + patch;
  return Status::Ok;
}

std::shared_ptr<const DepthModel> device_depth_model(bool use_calibration) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    static const auto none = std::make_shared<const DepthModel>();
    return none;
  }
  std::lock_guard<std::mutex> lock(g_models_mutex);
  DeviceEntry &e = entry_of(device);
  return use_calibration && e.calibrated ? e.calibrated : e.builtin;
}

namespace {

// Device buffers of the calibration, freed on every path.
struct CalibrationBuffers {
  void *a = nullptr, *b = nullptr, *c = nullptr;
  ~CalibrationBuffers() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
};

// Fills `bytes` of device memory at `dst` with uniform [-1, 1) values of
// type T (a random block repeated: the rates depend on the data's bits
// through power, not on the product).
template <class T>
bool fill_random(void *dst, std::size_t bytes, cudaStream_t stream) {
  std::vector<T> block(1 << 20);
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (T &x : block) x = T(u(rng));
  const std::size_t chunk = block.size() * sizeof(T);
  for (std::size_t off = 0; off < bytes; off += chunk)
    if (cudaMemcpyAsync(static_cast<char *>(dst) + off, block.data(),
                        std::min(chunk, bytes - off), cudaMemcpyHostToDevice,
                        stream) != cudaSuccess)
      return false;
  return cudaStreamSynchronize(stream) == cudaSuccess;
}

template <class T>
cublasStatus_t gemm(cublasHandle_t h, int n, const T *one, const T *A, const T *B,
                    const T *zero, T *C);
template <>
cublasStatus_t gemm<float>(cublasHandle_t h, int n, const float *one, const float *A,
                           const float *B, const float *zero, float *C) {
  return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, one, A, n, B, n, zero, C, n);
}
template <>
cublasStatus_t gemm<double>(cublasHandle_t h, int n, const double *one, const double *A,
                            const double *B, const double *zero, double *C) {
  return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, one, A, n, B, n, zero, C, n);
}

// Median of `trials` timings (ms) of `work`, each between two events.
template <class F>
bool median_ms(cudaStream_t stream, int trials, F work, double *ms) {
  cudaEvent_t start = nullptr, stop = nullptr;
  std::vector<double> t;
  bool ok = cudaEventCreate(&start) == cudaSuccess && cudaEventCreate(&stop) == cudaSuccess;
  for (int i = 0; ok && i < trials; ++i) {
    float f = 0;
    ok = cudaEventRecord(start, stream) == cudaSuccess && work() &&
         cudaEventRecord(stop, stream) == cudaSuccess &&
         cudaEventSynchronize(stop) == cudaSuccess &&
         cudaEventElapsedTime(&f, start, stop) == cudaSuccess;
    t.push_back(f);
  }
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  if (!ok) return false;
  std::sort(t.begin(), t.end());
  *ms = t[t.size() / 2];
  return true;
}

// The leaf grid's rates of T on square n x n x n GEMMs, ld = n (the
// recursion's temporaries are packed so). DGEMM on an H100 has slow
// episodes: a run of neighbouring sizes measured 15-20 % low, at different
// sizes in each calibration and by each way of timing. A slowdown only ever
// lowers a measurement, so each size's rate is the best of kPasses sweeps
// over the grid, each timing a train of back-to-back calls and single calls.
constexpr int kPasses = 2;
template <class T>
bool measure_rates(cublasHandle_t h, cudaStream_t stream, const CalibrationBuffers &buf,
                   std::size_t bytes, LeafRates *r) {
  if (!fill_random<T>(buf.a, bytes, stream) || !fill_random<T>(buf.b, bytes, stream))
    return false;
  const T one = 1, zero = 0;
  const T *A = static_cast<const T *>(buf.a), *B = static_cast<const T *>(buf.b);
  T *C = static_cast<T *>(buf.c);
  r->tflops.assign(kLeafGridCount, 0.0);
  for (int pass = 0; pass < kPasses; ++pass)
    for (int i = 0; i < kLeafGridCount; ++i) {
      const index_t n = r->first + r->step * i;
      const double flops = 2.0 * double(n) * double(n) * double(n);
      const int calls = int(std::clamp(5e11 / flops, 3.0, 400.0));  // about 10 ms
      auto train = [&] {
        for (int call = 0; call < calls; ++call)
          if (gemm<T>(h, int(n), &one, A, B, &zero, C) != CUBLAS_STATUS_SUCCESS)
            return false;
        return true;
      };
      auto single = [&] {
        return gemm<T>(h, int(n), &one, A, B, &zero, C) == CUBLAS_STATUS_SUCCESS;
      };
      double train_ms = 0, single_ms = 0;
      if (!train() || !median_ms(stream, 3, train, &train_ms) || train_ms <= 0 ||
          !median_ms(stream, std::max(5, calls), single, &single_ms) || single_ms <= 0)
        return false;
      const double ms = std::min(train_ms / calls, single_ms);
      r->tflops[std::size_t(i)] =
          std::max(r->tflops[std::size_t(i)], flops / (ms * 1e-3) / 1e12);
    }
  return true;
}

}  // namespace

Status calibrate_current_device(cublasHandle_t handle, DepthModel *model, std::string *path,
                                std::string *write_problem) {
  int device = 0;
  DeviceTraits traits;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return Status::ExecutionFailed;
  }
  Status s = query_device_traits(device, &traits);
  if (s != Status::Ok) return s;
  cudaStream_t stream = nullptr;
  cublasPointerMode_t mode;
  cublasMath_t math;
  if (cublasGetStream(handle, &stream) != CUBLAS_STATUS_SUCCESS ||
      cublasGetPointerMode(handle, &mode) != CUBLAS_STATUS_SUCCESS ||
      cublasGetMathMode(handle, &math) != CUBLAS_STATUS_SUCCESS)
    return Status::InvalidValue;
  DepthModel m;
  m.source = ModelSource::Calibrated;
  m.description = "calibrated on this device (" + traits.name + ")";
  for (LeafRates &r : m.rates) {
    r.first = kLeafGridFirst;
    r.step = kLeafGridStep;
  }
  const index_t largest = kLeafGridFirst + kLeafGridStep * (kLeafGridCount - 1);
  const std::size_t bytes = std::size_t(largest * largest) * sizeof(double);
  CalibrationBuffers buf;
  if (cudaMalloc(&buf.a, bytes) != cudaSuccess || cudaMalloc(&buf.b, bytes) != cudaSuccess ||
      cudaMalloc(&buf.c, bytes) != cudaSuccess) {
    cudaGetLastError();
    return Status::AllocFailed;
  }
  // Host scalars, and the default math mode whatever the handle's (a TF32
  // mode would measure other SGEMM rates than the library's leaves get by
  // default); both restored below.
  if (cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST) != CUBLAS_STATUS_SUCCESS ||
      cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS) {
    cublasSetPointerMode(handle, mode);
    return Status::ExecutionFailed;
  }
  bool ok = measure_rates<float>(handle, stream, buf, bytes, &m.rates[0]) &&
            measure_rates<double>(handle, stream, buf, bytes, &m.rates[1]);
  // The schedules' passes stream their operands once, as a copy does: the
  // bandwidth a device-to-device copy of 512 MiB sustains (read + write).
  double ms = 0;
  ok = ok && median_ms(stream, 5,
                       [&] {
                         return cudaMemcpyAsync(buf.c, buf.a, bytes,
                                                cudaMemcpyDeviceToDevice,
                                                stream) == cudaSuccess;
                       },
                       &ms) &&
       ms > 0;
  // Restored on every path; a failure to restore is the call's failure.
  ok = (cublasSetPointerMode(handle, mode) == CUBLAS_STATUS_SUCCESS) & ok;
  ok = (cublasSetMathMode(handle, math) == CUBLAS_STATUS_SUCCESS) & ok;
  if (!ok) {
    cudaGetLastError();
    return Status::ExecutionFailed;
  }
  m.elementwise_bytes_per_s = 2.0 * double(bytes) / (ms * 1e-3);
  *model = m;
  *path = calibration_path(traits);
  write_problem->clear();
  if (path->empty())
    *write_problem = "no cache folder (set XN_CACHE_DIR or HOME)";
  else
    write_file_atomically(*path, format_calibration(traits, kLibraryVersion, m),
                          write_problem);
  std::lock_guard<std::mutex> lock(g_models_mutex);
  entry_of(device).calibrated = std::make_shared<const DepthModel>(m);
  ++g_generation;
  return Status::Ok;
}

}  // namespace xn
