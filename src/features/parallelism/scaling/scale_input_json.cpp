#include "features/parallelism/scaling/scale_input_json.h"

namespace gpubench {

nlohmann::json scale_input_json(const ScaleInput& in) {
  return {{"result", in.source},     {"model", in.model},           {"precision", in.precision},
          {"device", in.device},     {"batch_size", in.batch_size}, {"seq_len", in.seq_len},
          {"unit", in.unit},         {"throughput", in.throughput}, {"step_ms", in.step_ms},
          {"rescaled", in.rescaled}, {"extended", in.extended}};
}

}  // namespace gpubench
