// How many objects the detection models' synthetic images hold: COCO 2017 train's mean (7.3 a
// image, rounded) unless the run says otherwise (--objects-per-image; 0 in ModelOptions: not
// said).
#pragma once

#include <cstdint>

#include "modeling/model_registry.h"

namespace gpubench {

inline constexpr int64_t kCocoObjectsPerImage = 7;

inline int64_t objects_per_image(const ModelOptions& options) {
  return options.objects_per_image > 0 ? options.objects_per_image : kCocoObjectsPerImage;
}

}  // namespace gpubench
