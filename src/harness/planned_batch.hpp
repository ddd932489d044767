// The batch a `run` announces before any model is opened: the rows of its --input files, else the
// first dimension of a --shape, else --batch. A model whose batch dimension is fixed can still
// differ; every result records the batch that ran, and the comparison table shows it.
#pragma once

#include <cstdint>
#include <string>

#include "core/input_generator.hpp"

namespace infermark::harness {

struct PlannedBatch {
  std::int64_t rows = 1;
  std::string source;  // the flag that fixes it, "--input input=photos.npy"; "" for --batch
};

// Reads only the header of an --input file. Throws infermark::Error naming an unreadable file.
PlannedBatch planned_batch(const InputRequest& inputs);

// "batch 7 (rows of --input input=photos.npy)", "batch 4 (--shape x=4x3)", "batch 1".
std::string planned_batch_text(const InputRequest& inputs);

}  // namespace infermark::harness
