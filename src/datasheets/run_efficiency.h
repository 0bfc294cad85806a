// A result's datasheet block and achieved fraction of peak: the run's GPU matched to its entry
// (never guessed), the dense peak of the precision that ran (fp32: FP32, tf32: TF32 tensor,
// fp16/bf16: FP16/BF16 tensor with FP32 accumulate), and the decode ceiling it gives
// (datasheets/decode_ceiling.h).
#pragma once

#include "datasheets/datasheet_database.h"
#include "results/result.h"

namespace gpubench {

void attach_datasheet(const DatasheetDatabase& database, Result& result);
// The same with the database datasheets() reads; a database that cannot be read leaves the
// result unmatched with the reason.
void attach_datasheet(Result& result);

}  // namespace gpubench
