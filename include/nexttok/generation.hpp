// generation/: the generate() loop and its result.
#pragma once

#include <nexttok/generation/generate.hpp>
#include <nexttok/generation/generation_result.hpp>
