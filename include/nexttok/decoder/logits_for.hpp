// Which positions of a forward call produce logits: part of the decoder's contract (decoder.hpp),
// in a header of its own so that code written against that contract (generation/token_decoder.hpp)
// need not include the decoder and its kernels.
#pragma once

namespace nexttok {

// Which positions of a forward call (or of one sequence of a batch) produce logits.
enum class logits_for { last, all, none };

}  // namespace nexttok
