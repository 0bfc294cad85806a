// Where the LibTorch this process runs on lies.
#pragma once

#include <string>

namespace gpubench::compat {

// The folder of the libtorch_cpu this process runs on ("/usr/lib/x86_64-linux-gnu" for Debian's,
// ".../site-packages/torch/lib" for a wheel's); "" where the loader cannot say.
std::string libtorch_folder();

}  // namespace gpubench::compat
