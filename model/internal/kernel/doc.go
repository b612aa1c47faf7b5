// Package kernel holds the CPU compute kernels of the model core: single
// precision GEMM ([Pool.Sgemm]), matrix-vector and small-batch
// matrix-matrix products over fp32, bf16 and 8-bit quantized weights
// ([Pool.MatVec], [Pool.MatMul] and their BF16 and Q8 variants), helpers for
// work that is already parallel ([Gemv], [GemvT], [Axpy], [Dot]), the
// bf16 conversions, and the float32 exponential [Exp32] with its vector
// forms [Exp] and [Softmax], which match it bit for bit.
//
// On amd64 the hot loops are Go assembly, chosen at start-up from CPUID.
// With AVX2 and FMA: a 6×16 GEMM micro-kernel behind a Goto/BLIS-style
// packing driver, multi-row mat-vec kernels that widen bf16 and int8
// weights in registers, transposing packers for weights used in prefill,
// and Exp and Softmax (separate multiplies and adds, rounding as Exp32
// does). With AVX-512 (F, BW, DQ, VL) the GEMM computes 12×32 tiles in the
// 32 ZMM registers, the fp32 and bf16 mat-vec kernels take 16 or 32 columns
// per instruction with masked tails, and with AVX512_VNNI the single-row
// Q8 kernel multiplies bytes with VPDPBUSD; the kernels without a 512-bit
// version keep their AVX2 one. The bf16 kernels widen the weights to fp32
// rather than use AVX512_BF16's VDPBF16PS: that multiplies bf16 by bf16,
// so an exact product with an fp32 activation would take the activation in
// three bf16 parts, and one VDPBF16PS costs four FMAs on the Xeons measured
// (bench/isa_throughput.c). On arm64 the GEMM micro-kernel, the fp32/bf16
// and single-row Q8 mat-vec, GemvT and Dot are NEON assembly. Elsewhere, on
// amd64 CPUs without AVX2/FMA, or when built with the purego tag, the same
// drivers run portable Go loops. [KernelsEnv]
// (LIVEHAT_KERNELS=avx512|avx2|purego) forces a kernel set the machine
// has, and [Kernels] names the one in use.
//
// Accuracy: every product sums in float32 (in an order that differs between
// kernels), so a result is within about k·2⁻²³·Σ|terms| of the exact sum.
// Q8 products first round the activations to int16 per block of 32 (as
// llama.cpp rounds them to int8), adding at most |w|·amax/65534 per product
// (amax the block's largest |x|) — far below the 8-bit weight's own
// rounding — so that the single-row kernel can multiply in exact integer
// arithmetic while every batch size still sees the same numbers.
//
// All parallel work runs on a [Pool], a fixed set of worker goroutines sized
// to the physical cores of the machine; between calls a worker polls for a
// few hundred microseconds before it parks, so that the many short calls
// of a decode step do not each pay a wake-up. Matrices are row-major; a leading
// dimension (lda, ldb, ldc, ldw) is the distance in elements between rows.
// Shape errors are programming errors and panic, as an out-of-range index
// would; [QuantizeQ8] returns errors because its input is data.
package kernel
