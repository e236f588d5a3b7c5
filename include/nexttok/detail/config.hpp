// How the library is compiled: header-only (the default) or separately.
//
// Header-only, every function is defined in the headers (`inline`) and nothing needs to be linked.
// With NEXTTOK_SEPARATE_COMPILATION defined (everywhere: the CMake target nexttok::compiled defines
// it for its users), the headers declare the functions that are not templates and the definitions,
// with what they need (the JSON parser, the Jinja engine, the loaders, the kernels' dispatch), are
// compiled once, in one translation unit that includes <nexttok/impl/src.hpp>. Including a header
// then costs about half as much to compile (the README gives the figures). The two modes give the
// same results; a program must not mix them.
//
// NEXTTOK_DECL marks those functions: `inline` header-only, nothing when compiled separately. A
// header ends with `#if NEXTTOK_HEADER_ONLY` and the include of its definitions (its impl/*.ipp).
#pragma once

#if defined(NEXTTOK_SEPARATE_COMPILATION)
#define NEXTTOK_HEADER_ONLY 0
#define NEXTTOK_DECL
#else
#define NEXTTOK_HEADER_ONLY 1
#define NEXTTOK_DECL inline
#endif
