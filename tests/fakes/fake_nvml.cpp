// A stand-in libnvidia-ml.so.1 for the telemetry tests: the NVML calls gpubench makes, playing
// readings scripted by environment variables (read at each call, counters reset by nvmlInit_v2):
//   FAKE_NVML_POWER_MW     comma-separated power readings, cycled (default 300000)
//   FAKE_NVML_ENERGY_STEP  mJ the energy counter advances per read (default 1000); "none": the
//                          call is not supported
//   FAKE_NVML_SM_CLOCKS    comma-separated SM clocks in MHz, cycled (default 1980)
//   FAKE_NVML_REASONS      comma-separated clock-event masks, cycled (default 0)
//   FAKE_NVML_INIT_ERROR   nvmlInit_v2 fails with this NVML error code
// Built once as is and once with FAKE_NVML_WITHOUT_POWER_USAGE (a library missing a symbol).
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int power_reads = 0, clock_reads = 0, reason_reads = 0;
unsigned long long energy_mj = 0;
int device_token = 0;

std::vector<unsigned long long> script(const char* variable, unsigned long long fallback) {
  const char* text = std::getenv(variable);
  std::vector<unsigned long long> values;
  if (text == nullptr || *text == '\0') return {fallback};
  std::string item;
  for (const char* c = text;; ++c) {
    if (*c == ',' || *c == '\0') {
      values.push_back(std::strtoull(item.c_str(), nullptr, 0));
      item.clear();
      if (*c == '\0') break;
    } else {
      item += *c;
    }
  }
  return values;
}

unsigned long long next(const char* variable, unsigned long long fallback, int& reads) {
  const auto values = script(variable, fallback);
  return values[static_cast<size_t>(reads++) % values.size()];
}

constexpr int kSuccess = 0, kNotSupported = 3, kInvalidArgument = 2;

}  // namespace

extern "C" {

int nvmlInit_v2() {
  power_reads = clock_reads = reason_reads = 0;
  energy_mj = 0;
  const char* error = std::getenv("FAKE_NVML_INIT_ERROR");
  return error != nullptr ? std::atoi(error) : kSuccess;
}
int nvmlShutdown() {
  return kSuccess;
}
const char* nvmlErrorString(int code) {
  return code == 9               ? "Driver Not Loaded"
         : code == kNotSupported ? "Not Supported"
                                 : "Unknown Error";
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  if (index > 7) return kInvalidArgument;
  *device = &device_token;
  return kSuccess;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char*, void** device) {
  *device = &device_token;
  return kSuccess;
}
int nvmlDeviceGetName(void*, char* name, unsigned int length) {
  std::strncpy(name, "Fake GPU", length);
  return kSuccess;
}
#ifndef FAKE_NVML_WITHOUT_POWER_USAGE
int nvmlDeviceGetPowerUsage(void*, unsigned int* milliwatts) {
  *milliwatts = static_cast<unsigned int>(next("FAKE_NVML_POWER_MW", 300000, power_reads));
  return kSuccess;
}
#endif
int nvmlDeviceGetTotalEnergyConsumption(void*, unsigned long long* millijoules) {
  const char* step = std::getenv("FAKE_NVML_ENERGY_STEP");
  if (step != nullptr && std::strcmp(step, "none") == 0) return kNotSupported;
  energy_mj += step != nullptr ? std::strtoull(step, nullptr, 10) : 1000;
  *millijoules = energy_mj;
  return kSuccess;
}
int nvmlDeviceGetClockInfo(void*, int type, unsigned int* mhz) {
  *mhz =
      type == 1 ? static_cast<unsigned int>(next("FAKE_NVML_SM_CLOCKS", 1980, clock_reads)) : 2619;
  return kSuccess;
}
int nvmlDeviceGetMaxClockInfo(void*, int, unsigned int* mhz) {
  *mhz = 1980;
  return kSuccess;
}
int nvmlDeviceGetApplicationsClock(void*, int, unsigned int*) {
  return kNotSupported;
}
int nvmlDeviceGetTemperature(void*, int, unsigned int* celsius) {
  *celsius = 61;
  return kSuccess;
}
int nvmlDeviceGetMemoryInfo(void*, unsigned long long* memory) {
  memory[0] = 150ull << 30;  // total, free, used
  memory[1] = 149ull << 30;
  memory[2] = 1ull << 30;
  return kSuccess;
}
int nvmlDeviceGetCurrentClocksEventReasons(void*, unsigned long long* reasons) {
  *reasons = next("FAKE_NVML_REASONS", 0, reason_reads);
  return kSuccess;
}
int nvmlDeviceGetEnforcedPowerLimit(void*, unsigned int* milliwatts) {
  *milliwatts = 700000;
  return kSuccess;
}
int nvmlDeviceGetPersistenceMode(void*, int* mode) {
  *mode = 1;
  return kSuccess;
}
}
