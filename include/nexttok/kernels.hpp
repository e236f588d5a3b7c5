// kernels/: the numeric building blocks (dot products, matmul per weight format, quantized
// blocks and their (de)quantization, norms, RoPE, softmax) and the thread pool. They know nothing
// of models.
#pragma once

#include <nexttok/kernels/dot.hpp>
#include <nexttok/kernels/matmul.hpp>
#include <nexttok/kernels/ops.hpp>
#include <nexttok/kernels/quant_act.hpp>
#include <nexttok/kernels/quant_blocks.hpp>
#include <nexttok/kernels/quant_dot.hpp>
#include <nexttok/kernels/quantize.hpp>
#include <nexttok/kernels/thread_pool.hpp>
#include <nexttok/kernels/weight_types.hpp>
