package cublas

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// colMajorGemm is the BLAS definition in column-major storage, over a flat
// "memory" of float64 indexed by the operand addresses (offsets here).
func colMajorGemm(mem []float64, cm colMajor, c, ldc int) {
	at := func(o Operand, trans int32, i, j int) float64 {
		if trans == 1 {
			i, j = j, i
		}
		return mem[int(o.Ptr)+i+j*o.LD]
	}
	for i := range cm.m {
		for j := range cm.n {
			var s float64
			for p := range cm.k {
				s += at(cm.a, cm.transA, i, p) * at(cm.b, cm.transB, p, j)
			}
			mem[c+i+j*ldc] = s
		}
	}
}

// TestRowMajorMapping checks that toColMajor turns every combination of
// row-major transpositions and padded leading dimensions into the cuBLAS
// call that produces the row-major product.
func TestRowMajorMapping(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			m, n, k := 3, 5, 4
			// Row-major shapes: op(A) is m×k, so A is k×m when transposed.
			aRows, aCols := m, k
			if ta {
				aRows, aCols = k, m
			}
			bRows, bCols := k, n
			if tb {
				bRows, bCols = n, k
			}
			lda, ldb, ldc := aCols+2, bCols+1, n+3
			mem := make([]float64, 400)
			aOff, bOff, cOff := 0, 100, 200
			for i := range aRows * lda {
				mem[aOff+i] = rng.Float64()
			}
			for i := range bRows * ldb {
				mem[bOff+i] = rng.Float64()
			}
			A := func(i, p int) float64 { // op(A)[i][p], row-major
				if ta {
					return mem[aOff+p*lda+i]
				}
				return mem[aOff+i*lda+p]
			}
			B := func(p, j int) float64 {
				if tb {
					return mem[bOff+j*ldb+p]
				}
				return mem[bOff+p*ldb+j]
			}
			cm := toColMajor(m, n, k,
				Operand{Ptr: uint64(aOff), Type: R32F, LD: lda, Trans: ta},
				Operand{Ptr: uint64(bOff), Type: R32F, LD: ldb, Trans: tb})
			colMajorGemm(mem, cm, cOff, ldc)
			for i := range m {
				for j := range n {
					var want float64
					for p := range k {
						want += A(i, p) * B(p, j)
					}
					if got := mem[cOff+i*ldc+j]; abs(got-want) > 1e-12 {
						t.Fatalf("transA=%v transB=%v C[%d][%d] = %v, want %v", ta, tb, i, j, got, want)
					}
				}
			}
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestStatusNames(t *testing.T) {
	if StatusName(13) != "CUBLAS_STATUS_EXECUTION_FAILED" || StatusName(99) != "cublasStatus(99)" {
		t.Error("status names")
	}
	e := &Error{Op: "cublasGemmEx", Code: 7, Name: StatusName(7)}
	if e.Error() != "cublas: cublasGemmEx: CUBLAS_STATUS_INVALID_VALUE" {
		t.Errorf("Error() = %q", e)
	}
	if len(symbols()) != numFns {
		t.Fatal("symbol table size")
	}
	for i, s := range symbols() {
		if !strings.HasPrefix(s.Names[0], "cublas") || (s.Optional != (i == fnGetStatusName)) {
			t.Errorf("symbol %d: %+v", i, s)
		}
	}
}

func TestNoLibrary(t *testing.T) {
	l, err := Load()
	if err == nil {
		t.Skipf("cuBLAS is installed here (%s)", l.Path())
	}
	if !errors.Is(err, ErrNoLibrary) || !strings.Contains(err.Error(), "libcublas.so.12") {
		t.Errorf("Load without cuBLAS: %v", err)
	}
}
