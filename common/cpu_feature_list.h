// The x86 instruction sets the compiler may have used in this translation
// unit (-Dcpu), one TFD_CPU_FEATURE(name) each, name as __builtin_cpu_supports
// spells it. An X-macro list: define TFD_CPU_FEATURE, include, undefine.
//
// Only sets the compiler emits on its own, so that a binary is refused for
// what its code may really execute; sets used only through intrinsics (SHA,
// RDRND, SSE4A, ...) are left out. LZCNT, MOVBE and F16C, which the compiler
// does emit, have no name in GCC 12's __builtin_cpu_supports; every CPU with
// AVX2 has them. Every file of a build gets the same -march (meson.build), so
// this list describes the whole binary.
//
// No include guard: it is meant to be included more than once.
#if defined(__x86_64__)
#ifdef __SSE3__
TFD_CPU_FEATURE("sse3")
#endif
#ifdef __SSSE3__
TFD_CPU_FEATURE("ssse3")
#endif
#ifdef __SSE4_1__
TFD_CPU_FEATURE("sse4.1")
#endif
#ifdef __SSE4_2__
TFD_CPU_FEATURE("sse4.2")
#endif
#ifdef __POPCNT__
TFD_CPU_FEATURE("popcnt")
#endif
#ifdef __AVX__
TFD_CPU_FEATURE("avx")
#endif
#ifdef __AVX2__
TFD_CPU_FEATURE("avx2")
#endif
#ifdef __FMA__
TFD_CPU_FEATURE("fma")
#endif
#ifdef __BMI__
TFD_CPU_FEATURE("bmi")
#endif
#ifdef __BMI2__
TFD_CPU_FEATURE("bmi2")
#endif
#ifdef __AVX512F__
TFD_CPU_FEATURE("avx512f")
#endif
#ifdef __AVX512CD__
TFD_CPU_FEATURE("avx512cd")
#endif
#ifdef __AVX512VL__
TFD_CPU_FEATURE("avx512vl")
#endif
#ifdef __AVX512BW__
TFD_CPU_FEATURE("avx512bw")
#endif
#ifdef __AVX512DQ__
TFD_CPU_FEATURE("avx512dq")
#endif
#ifdef __AVX512IFMA__
TFD_CPU_FEATURE("avx512ifma")
#endif
#ifdef __AVX512VBMI__
TFD_CPU_FEATURE("avx512vbmi")
#endif
#ifdef __AVX512VBMI2__
TFD_CPU_FEATURE("avx512vbmi2")
#endif
#ifdef __AVX512VNNI__
TFD_CPU_FEATURE("avx512vnni")
#endif
#ifdef __AVX512BITALG__
TFD_CPU_FEATURE("avx512bitalg")
#endif
#ifdef __AVX512VPOPCNTDQ__
TFD_CPU_FEATURE("avx512vpopcntdq")
#endif
#ifdef __AVX512BF16__
TFD_CPU_FEATURE("avx512bf16")
#endif
#ifdef __GFNI__
TFD_CPU_FEATURE("gfni")
#endif
#ifdef __VPCLMULQDQ__
TFD_CPU_FEATURE("vpclmulqdq")
#endif
#endif  // __x86_64__
