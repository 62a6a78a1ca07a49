// <immintrin.h> for pao's vector loops. GCC 12's AVX-512 intrinsics build their results from
// self-initialised "undefined" vectors and then warn about them (-Wuninitialized,
// -Wmaybe-uninitialized; GCC bug 105593, fixed in 13): the warning is about the header, so it is
// silenced for the files that include this one.
#pragma once

#if defined(__AVX512F__) || defined(__AVX2__) || defined(__AVX__) || defined(__F16C__) || defined(__FMA__)
#include <immintrin.h>
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
