// A model of the Llama layout (RMSNorm, RoPE, SwiGLU, no biases) with random weights, built in memory: for the example program's
// built-in demo (no file needed), for benchmarks of any shape and weight type, and for tests.
// Weights are uniform in [-1/sqrt(cols), 1/sqrt(cols)] from a seeded splitmix64 stream (the same
// seed gives the same model on every platform); norm weights are 1.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/model/model_config.hpp>
#include <nexttok/tensor/tensor_type.hpp>

#include <cstdint>
#include <memory>

namespace nexttok {

// `c` gives every size (tied_output picks whether `output` is the embedding); `type` is the storage
// of the matrices: f32, f16, bf16 (values uniform in +-1/sqrt(cols)), or q8_0, q4_0, q4_k, q5_k,
// q6_k, q4_1, q5_0, q5_1, iq4_nl, q2_k, q3_k, iq4_xs (random quants, scales of the same magnitude). Norm weights are f32 ones.
// `repack`: the model's constructor's (q8_0 and q4_0 matrices repacked in place for the kernels).
NEXTTOK_DECL std::shared_ptr<const model> make_random_model(model_config c, std::uint64_t seed,
                                                            tensor_type type = tensor_type::f32, bool repack = true);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/model/impl/random_model.ipp>
#endif
