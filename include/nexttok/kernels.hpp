// kernels/: the numeric building blocks (dot products, matmul per weight format, the
// dequantization of quantized blocks, attention over a cache's rows, norms, RoPE, softmax) and the
// thread pool, each for AVX-512, AVX2 and portable C++ (detail/isa.hpp names them).
#pragma once

#include <nexttok/kernels/attention.hpp>
#include <nexttok/kernels/dequantize.hpp>
#include <nexttok/kernels/dot.hpp>
#include <nexttok/kernels/matmul.hpp>
#include <nexttok/kernels/ops.hpp>
#include <nexttok/kernels/q8_0_rows.hpp>
#include <nexttok/kernels/quant_act.hpp>
#include <nexttok/kernels/quant_dot.hpp>
#include <nexttok/kernels/thread_pool.hpp>
#include <nexttok/tensor.hpp>
