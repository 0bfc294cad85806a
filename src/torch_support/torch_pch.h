// Precompiled header: LibTorch's headers dominate compile time on small machines.
#pragma once
#include <torch/torch.h>
