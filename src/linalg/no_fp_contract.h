// ONYX_NO_CONTRACT marks a function whose products and sums must round one at a time, as the
// arithmetic it reproduces does. GCC would otherwise contract a * b + c into an fma wherever the
// target has FMA (its default for C++ is fp-contract=fast). Clang contracts only within one
// expression and ignores the attribute: such a function also opens its body with
// `#pragma clang fp contract(off)` under __clang__.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#define ONYX_NO_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define ONYX_NO_CONTRACT
#endif
