// A copy of a model with its matrices quantized to q8_0 or q4_0 (llama.cpp's reference rounding,
// kernels/quantize.hpp), built in memory: the same weights stored more coarsely, e.g. as a
// self-speculation draft (speculative/model_drafter.hpp) of the model it came from.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/model/model.hpp>

#include <memory>

namespace nexttok {

// `m` with every matrix whose rows are a whole number of 32-value blocks stored as `type` (q8_0 or
// q4_0, quantized as llama.cpp's reference quantize_row_*_ref), the others (norms, rows of other
// lengths) copied as they are, in one buffer the new model owns. A tied classifier stays tied.
// Cost: one read_row and one quantize_row per row (seconds for 1.1B weights). Throws
// invalid_argument_error for another type.
NEXTTOK_DECL std::shared_ptr<const model> quantized_copy(const model& m, tensor_type type);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/speculative/impl/quantized_copy.ipp>
#endif
