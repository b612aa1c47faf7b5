// Package kernel holds the CPU compute kernels of the model core: single
// precision GEMM, matrix-vector and small-batch matrix-matrix products over
// fp32, bf16 and 8-bit quantized weights, and the bf16 conversions.
//
// On amd64 with AVX2 and FMA the hot loops are Go assembly (a 6×16 GEMM
// micro-kernel behind a Goto/BLIS-style packing driver, multi-row mat-vec
// kernels that widen bf16 and int8 weights in registers). Elsewhere, on CPUs
// without those features, or when built with the purego tag, the same
// drivers run portable Go loops, so results agree within rounding everywhere.
//
// All parallel work runs on a [Pool], a fixed set of worker goroutines sized
// to the physical cores of the machine. Matrices are row-major; a leading
// dimension (lda, ldb, ldc) is the distance in elements between rows.
package kernel
