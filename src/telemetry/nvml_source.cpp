#include "telemetry/nvml_source.h"

#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>

#include "common/input_limits.h"

namespace gpubench {
namespace {

// From nvml.h (declared here so that building needs no NVML header).
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kClockSm = 1, kClockMemory = 2, kTemperatureGpu = 0;
struct NvmlMemory {
  unsigned long long total, free, used;
};

struct NvmlFunctions {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlReturn (*handle_by_index)(unsigned int, NvmlDevice*) = nullptr;
  NvmlReturn (*power_usage)(NvmlDevice, unsigned int*) = nullptr;
  // Optional: a figure the library lacks is left out.
  NvmlReturn (*handle_by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*name)(NvmlDevice, char*, unsigned int) = nullptr;
  NvmlReturn (*total_energy)(NvmlDevice, unsigned long long*) = nullptr;
  NvmlReturn (*clock)(NvmlDevice, int, unsigned int*) = nullptr;
  NvmlReturn (*max_clock)(NvmlDevice, int, unsigned int*) = nullptr;
  NvmlReturn (*applications_clock)(NvmlDevice, int, unsigned int*) = nullptr;
  NvmlReturn (*temperature)(NvmlDevice, int, unsigned int*) = nullptr;
  NvmlReturn (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*clock_event_reasons)(NvmlDevice, unsigned long long*) = nullptr;
  NvmlReturn (*power_limit)(NvmlDevice, unsigned int*) = nullptr;
  NvmlReturn (*persistence_mode)(NvmlDevice, int*) = nullptr;
};

class NvmlLibrary {
 public:
  // Throws std::runtime_error with the reason.
  NvmlLibrary() {
    const char* configured = std::getenv("GPUBENCH_NVML_LIBRARY");
    path_ = configured != nullptr && *configured != '\0' ? configured : "libnvidia-ml.so.1";
    handle_ = ::dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* error = ::dlerror();
      throw std::runtime_error("cannot load " + echoed(path_) + " (no NVIDIA driver?): " +
                               echoed(error != nullptr ? error : "unknown error", 160));
    }
    try {
      bind_required("nvmlInit_v2", f_.init);
      bind_required("nvmlShutdown", f_.shutdown);
      bind_required("nvmlErrorString", f_.error_string);
      bind_required("nvmlDeviceGetHandleByIndex_v2", f_.handle_by_index);
      bind_required("nvmlDeviceGetPowerUsage", f_.power_usage);
      bind("nvmlDeviceGetHandleByPciBusId_v2", f_.handle_by_pci_bus_id);
      bind("nvmlDeviceGetName", f_.name);
      bind("nvmlDeviceGetTotalEnergyConsumption", f_.total_energy);
      bind("nvmlDeviceGetClockInfo", f_.clock);
      bind("nvmlDeviceGetMaxClockInfo", f_.max_clock);
      bind("nvmlDeviceGetApplicationsClock", f_.applications_clock);
      bind("nvmlDeviceGetTemperature", f_.temperature);
      bind("nvmlDeviceGetMemoryInfo", f_.memory);
      bind("nvmlDeviceGetEnforcedPowerLimit", f_.power_limit);
      bind("nvmlDeviceGetPersistenceMode", f_.persistence_mode);
      // Renamed in driver 535; the older name has the same signature.
      bind("nvmlDeviceGetCurrentClocksEventReasons", f_.clock_event_reasons);
      if (f_.clock_event_reasons == nullptr) {
        bind("nvmlDeviceGetCurrentClocksThrottleReasons", f_.clock_event_reasons);
      }
      check(f_.init(), "nvmlInit_v2");
      initialized_ = true;
    } catch (...) {
      ::dlclose(handle_);
      throw;
    }
  }
  ~NvmlLibrary() {
    if (initialized_) f_.shutdown();
    ::dlclose(handle_);
  }
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const NvmlFunctions& functions() const { return f_; }
  void check(NvmlReturn status, const char* call) const {
    if (status == kNvmlSuccess) return;
    const char* text = f_.error_string != nullptr ? f_.error_string(status) : nullptr;
    throw std::runtime_error(std::string(call) + " failed: " +
                             echoed(text != nullptr ? text : "error " + std::to_string(status)));
  }

 private:
  template <typename Function>
  void bind(const char* symbol, Function& function) {
    function = reinterpret_cast<Function>(::dlsym(handle_, symbol));
  }
  template <typename Function>
  void bind_required(const char* symbol, Function& function) {
    bind(symbol, function);
    if (function == nullptr) {
      throw std::runtime_error(echoed(path_) + " has no " + symbol + " (a driver too old?)");
    }
  }

  std::string path_;
  void* handle_ = nullptr;
  NvmlFunctions f_;
  bool initialized_ = false;
};

template <typename Value>
std::optional<double> read_optional(NvmlReturn (*function)(NvmlDevice, Value*), NvmlDevice device,
                                    double scale) {
  Value value{};
  if (function == nullptr || function(device, &value) != kNvmlSuccess) return std::nullopt;
  return static_cast<double>(value) * scale;
}

std::optional<double> read_clock(NvmlReturn (*function)(NvmlDevice, int, unsigned int*),
                                 NvmlDevice device, int which) {
  unsigned int value = 0;
  if (function == nullptr || function(device, which, &value) != kNvmlSuccess) return std::nullopt;
  return static_cast<double>(value);
}

class NvmlSource : public TelemetrySource {
 public:
  NvmlSource(const std::string& pci_bus_id, int index) {
    const NvmlFunctions& f = library_.functions();
    if (!pci_bus_id.empty() && f.handle_by_pci_bus_id != nullptr) {
      library_.check(f.handle_by_pci_bus_id(pci_bus_id.c_str(), &device_),
                     "nvmlDeviceGetHandleByPciBusId_v2");
    } else {
      library_.check(f.handle_by_index(static_cast<unsigned int>(index), &device_),
                     "nvmlDeviceGetHandleByIndex_v2");
    }
    char name[96] = {};
    if (f.name == nullptr || f.name(device_, name, sizeof name) != kNvmlSuccess) name[0] = '\0';
    description_ = "cuda:" + std::to_string(index) + " " + name +
                   (pci_bus_id.empty() ? "" : " (" + pci_bus_id + ")");
    unsigned int power = 0;  // a device without a power reading gives no telemetry at all
    library_.check(f.power_usage(device_, &power), "nvmlDeviceGetPowerUsage");
  }

  std::string device() const override { return description_; }

  TelemetrySample sample() override {
    const NvmlFunctions& f = library_.functions();
    TelemetrySample s;
    s.power_w = read_optional(f.power_usage, device_, 1e-3);
    s.sm_clock_mhz = read_clock(f.clock, device_, kClockSm);
    s.memory_clock_mhz = read_clock(f.clock, device_, kClockMemory);
    s.temperature_c = read_clock(f.temperature, device_, kTemperatureGpu);
    NvmlMemory memory{};
    if (f.memory != nullptr && f.memory(device_, &memory) == kNvmlSuccess) {
      s.memory_used_bytes = static_cast<int64_t>(memory.used);
    }
    unsigned long long reasons = 0;
    if (f.clock_event_reasons != nullptr &&
        f.clock_event_reasons(device_, &reasons) == kNvmlSuccess) {
      s.clock_event_reasons = reasons;
    }
    return s;
  }

  std::optional<double> energy_j() override {
    return read_optional(library_.functions().total_energy, device_, 1e-3);  // mJ
  }

  void describe(DeviceTelemetry& into) override {
    const NvmlFunctions& f = library_.functions();
    into.power_limit_w = read_optional(f.power_limit, device_, 1e-3).value_or(0);
    into.max_sm_clock_mhz = read_clock(f.max_clock, device_, kClockSm).value_or(0);
    into.applications_sm_clock_mhz =
        read_clock(f.applications_clock, device_, kClockSm).value_or(0);
    int mode = 0;
    if (f.persistence_mode != nullptr && f.persistence_mode(device_, &mode) == kNvmlSuccess) {
      into.persistence_mode = mode != 0 ? "enabled" : "disabled";
    }
  }

 private:
  NvmlLibrary library_;
  NvmlDevice device_ = nullptr;
  std::string description_;
};

}  // namespace

OpenedSource open_nvml_source(const std::string& pci_bus_id, int index) {
  try {
    return {std::make_unique<NvmlSource>(pci_bus_id, index), ""};
  } catch (const std::exception& error) {
    return {nullptr, error.what()};
  }
}

}  // namespace gpubench
