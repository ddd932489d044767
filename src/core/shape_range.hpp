// Input shapes that vary from query to query (--shape-range): per-dimension ranges, optionally
// rounded up to buckets, and the seeded draws that make the pool of input sets a run cycles through.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace infermark {

// One dimension: sizes drawn uniformly from [low, high]; with a bucket, each draw is rounded up to
// a multiple of it (capped at high), so only a few distinct sizes occur. low == high: fixed.
struct DimRange {
  std::int64_t low = 0, high = 0, bucket = 0;
  bool varies() const { return low != high; }
  bool operator==(const DimRange&) const = default;
};
using ShapeRange = std::vector<DimRange>;

struct VaryingShapes {
  std::map<std::string, ShapeRange> ranges;  // input name -> its range
  int sets = 32;                             // input sets drawn ahead; queries cycle through them
  bool active() const { return !ranges.empty(); }
};

// "1x3x160-288x160-288", "1x16-128/16": each dimension N, LOW-HIGH or LOW-HIGH/BUCKET. Throws
// infermark::Error naming `where` (the flag and its value) for malformed or empty ranges.
ShapeRange parse_shape_range(const std::string& text, const std::string& where);
std::string format_shape_range(const ShapeRange& range);

// Whether any dimension varies (a range of fixed dimensions is just a shape).
bool varies(const ShapeRange& range);
// Whether every varying dimension is bucketed: the sets then hold a few shapes a framework may
// prepare one by one.
bool bucketed(const VaryingShapes& shapes);

std::int64_t round_up_to_bucket(std::int64_t value, const DimRange& dim);

// `shapes.sets` draws, each a concrete shape per input, seeded. One value is drawn per dimension
// position and shared by every input that varies there, so BERT's input_ids, attention_mask and
// token_type_ids keep one sequence length; throws when two inputs range one position differently.
std::vector<std::map<std::string, std::vector<std::int64_t>>> draw_shapes(const VaryingShapes& shapes, std::uint64_t seed);

}  // namespace infermark
