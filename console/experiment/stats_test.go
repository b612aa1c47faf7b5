package experiment

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol || math.IsNaN(got) {
		t.Errorf("%s = %.12g, want %.12g (±%g)", what, got, want, tol)
	}
}

// The reference values were computed with mpmath at 30 digits: t
// quantiles by root-finding the regularized incomplete beta
// (P(T ≤ t) = 1 − ½ I_{df/(df+t²)}(df/2, ½)), chi-square tails with the
// regularized upper incomplete gamma.
func TestDistributions(t *testing.T) {
	near(t, "t(0.975, 1)", studentTQuantile(0.975, 1), 12.7062047361747046, 1e-9)
	near(t, "t(0.975, 10)", studentTQuantile(0.975, 10), 2.22813885198627475, 1e-10)
	near(t, "t(0.975, 30)", studentTQuantile(0.975, 30), 2.04227245630123831, 1e-10)
	near(t, "t(0.025, 10)", studentTQuantile(0.025, 10), -2.22813885198627475, 1e-10)
	near(t, "t(0.975, 5.88235)", studentTQuantile(0.975, 6.25/1.0625), 2.45882370969914685, 1e-10)
	near(t, "t(0.975, 1e9) = z", studentTQuantile(0.975, 1e9), 1.959963984540054, 1e-12)
	near(t, "P(T10 ≤ 2.2281)", studentTCDF(2.22813885198627475, 10), 0.975, 1e-12)
	near(t, "P(T ≤ 0)", studentTCDF(0, 7.3), 0.5, 1e-15)
	near(t, "χ²₁ tail at 3.8415", chiSquareSurvival(3.841458820694124, 1), 0.05, 1e-12)
	near(t, "χ²₅ tail at 11.0705", chiSquareSurvival(11.070497693516351, 5), 0.05, 1e-12)
	// χ²₂'s tail is exp(−x/2) exactly.
	near(t, "χ²₂ tail at 5", chiSquareSurvival(5, 2), math.Exp(-2.5), 1e-14)
	near(t, "χ²₂ tail at 0.3", chiSquareSurvival(0.3, 2), math.Exp(-0.15), 1e-14)
}

// TestWelch: control 1,2,3,4,5 (mean 3, variance 2.5), treatment
// 3,5,7,9,11 (mean 7, variance 10). By hand: diff 4, se² = 2.5/5 + 10/5 =
// 2.5, df = 2.5² / ((0.5²)/4 + (2²)/4) = 6.25/1.0625 = 5.882352941, t =
// 4/√2.5 = 2.529822128; the quantile t(0.975, 5.8824) = 2.458823710 and
// the two-sided p = 0.045464619 come from mpmath. Uplift 7/3 − 1 = 4/3,
// with delta-method se √(2/9 + 49·0.5/81) = √(0.524691358).
func TestWelch(t *testing.T) {
	c := sample{num: []float64{1, 2, 3, 4, 5}, den: []float64{1, 1, 1, 1, 1}}
	tr := sample{num: []float64{3, 5, 7, 9, 11}, den: []float64{1, 1, 1, 1, 1}}
	w := welch(ratioEstimate(c), ratioEstimate(tr), 0.05)
	near(t, "diff", w.diff, 4, 1e-12)
	near(t, "se", w.se, math.Sqrt(2.5), 1e-12)
	near(t, "df", w.df, 6.25/1.0625, 1e-9)
	near(t, "t", w.t, 2.52982212813470347, 1e-12)
	near(t, "p", w.p, 0.0454646189709304524, 1e-9)
	q := 2.45882370969914685
	near(t, "lo", w.lo, 4-q*math.Sqrt(2.5), 1e-9)
	near(t, "hi", w.hi, 4+q*math.Sqrt(2.5), 1e-9)
	near(t, "uplift", w.uplift, 4.0/3, 1e-12)
	near(t, "uplift hi", w.upHi, 4.0/3+q*math.Sqrt(2.0/9+49*0.5/81), 1e-9)
}

// TestRatioDelta: a stream-unit metric with per-stream numerators 2 and 4
// over 1 and 3 viewers: R = 6/4 = 1.5; linearized values (2 − 1.5)/2 and
// (4 − 4.5)/2 = ±0.25, variance 0.125, so var(R) = 0.125/2 = 0.0625.
func TestRatioDelta(t *testing.T) {
	e := ratioEstimate(sample{num: []float64{2, 4}, den: []float64{1, 3}})
	near(t, "ratio", e.value, 1.5, 1e-15)
	near(t, "var", e.variance, 0.0625, 1e-15)
}

// TestSRM: 520 vs 480 on a 50/50 split: expected 500 each, χ² = (20² +
// 20²)/500 = 1.6, p = P(χ²₁ > 1.6) = erfc(√0.8) = 0.2059032107. Three
// arms 100/100/130 on equal weights: expected 110, χ² = (100+100+400)/110
// = 5.4545, p = exp(−χ²/2) = 0.0653974032. A 10/90 canary that got
// 1000/9000 is fine; one that got 1200/8800 is a mismatch.
func TestSRM(t *testing.T) {
	r, err := CheckSRM([]int{520, 480}, []float64{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "χ²", r.ChiSquare, 1.6, 1e-12)
	near(t, "p", r.PValue, 0.205903210732068296, 1e-10)
	if r.Mismatch {
		t.Error("520/480 flagged as a mismatch")
	}
	r, _ = CheckSRM([]int{100, 100, 130}, []float64{1, 1, 1})
	near(t, "χ² 3 arms", r.ChiSquare, 600.0/110, 1e-12)
	near(t, "p 3 arms", r.PValue, 0.0653974032298601897, 1e-10)
	if r, _ := CheckSRM([]int{1000, 9000}, []float64{1, 9}); r.Mismatch || r.ChiSquare != 0 {
		t.Errorf("exact canary split: %+v", r)
	}
	if r, _ := CheckSRM([]int{1200, 8800}, []float64{1, 9}); !r.Mismatch {
		t.Errorf("1200/8800 on a 10/90 split not flagged: %+v", r)
	}
	for _, bad := range []struct {
		o []int
		w []float64
	}{{[]int{1}, []float64{1}}, {[]int{1, 2}, []float64{1}}, {[]int{-1, 2}, []float64{1, 1}}, {[]int{1, 2}, []float64{0, 1}}} {
		if _, err := CheckSRM(bad.o, bad.w); err == nil {
			t.Errorf("CheckSRM(%v, %v) accepted", bad.o, bad.w)
		}
	}
}

// TestPlanSampleSize: mean 10, sd 20, 10 % effect, α 0.05, power 0.8:
// n = 2 (1.959964 + 0.841621)² · 400 / 1² = 6279.10 → 6280 per arm.
func TestPlanSampleSize(t *testing.T) {
	n, err := PlanSampleSize(10, 20, 0.1, 0.05, 0.8)
	if err != nil || n != 6280 {
		t.Errorf("PlanSampleSize = %d, %v; want 6280", n, err)
	}
	for _, bad := range [][5]float64{{0, 1, .1, .05, .8}, {1, 0, .1, .05, .8}, {1, 1, 0, .05, .8}, {1, 1, .1, 1, .8}, {1, 1, .1, .05, 1}} {
		if _, err := PlanSampleSize(bad[0], bad[1], bad[2], bad[3], bad[4]); err == nil {
			t.Errorf("PlanSampleSize%v accepted", bad)
		}
	}
}

// TestMSPRT: θ̂ = 1, v = 0.25, τ² = 1: ln Λ = ½ ln(0.25/1.25) + 1/(2 ·
// 0.25 · 1.25) = 0.795281, p = 1/Λ = 0.4514543387; half-width
// √(2·0.25·1.25 · (ln 20 + ½ ln 5)) = 1.5411949969.
func TestMSPRT(t *testing.T) {
	p, lo, hi := msprt(1, 0.25, 1, 0.05)
	near(t, "p", p, 0.451454338656559015, 1e-12)
	near(t, "lo", lo, 1-1.54119499694454650, 1e-12)
	near(t, "hi", hi, 1+1.54119499694454650, 1e-12)
	if p, _, _ := msprt(0, 0.25, 1, 0.05); p != 1 {
		t.Errorf("no effect: p = %v, want 1", p)
	}
}

// TestCUPED: y = x exactly in the control and y = x + 1 in the treatment,
// with the treatment's x one higher. The raw difference is 4.5 − 2.5 = 2;
// the pre-period explains all variance (θ = 1), so the adjusted values are
// 2.5 − (2.5 − 3) = 3 and 4.5 − (3.5 − 3) = 4: a difference of exactly 1,
// with no variance left.
func TestCUPED(t *testing.T) {
	ones := []float64{1, 1, 1, 1}
	c := sample{num: []float64{1, 2, 3, 4}, den: ones, cov: []float64{1, 2, 3, 4}}
	tr := sample{num: []float64{3, 4, 5, 6}, den: ones, cov: []float64{2, 3, 4, 5}}
	ac, at, theta, ok := cupedEstimates(c, tr)
	if !ok {
		t.Fatal("CUPED not applied")
	}
	near(t, "θ", theta, 1, 1e-12)
	near(t, "control", ac.value, 3, 1e-12)
	near(t, "treatment", at.value, 4, 1e-12)
	near(t, "variance", ac.variance+at.variance, 0, 1e-24)
	if _, _, _, ok := cupedEstimates(sample{num: ones, den: ones, cov: ones}, sample{num: ones, den: ones, cov: ones}); ok {
		t.Error("CUPED applied with a constant covariate")
	}
}

// TestBootstrap: the seeded bootstrap is reproducible, and for a large
// roughly normal sample its interval is close to Welch's.
func TestBootstrap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	mk := func(shift float64) sample {
		s := sample{}
		for range 2000 {
			s.num = append(s.num, rng.NormFloat64()+shift)
			s.den = append(s.den, 1)
		}
		return s
	}
	c, tr := mk(10), mk(10.2)
	a := bootstrapRatio(c, tr, 1000, 0.05, 7)
	b := bootstrapRatio(c, tr, 1000, 0.05, 7)
	if a != b {
		t.Errorf("same seed, different intervals: %+v vs %+v", a, b)
	}
	w := welch(ratioEstimate(c), ratioEstimate(tr), 0.05)
	near(t, "bootstrap lo vs Welch", a.lo, w.lo, 0.02)
	near(t, "bootstrap hi vs Welch", a.hi, w.hi, 0.02)
	near(t, "percentile", percentile([]float64{4, 1, 3, 2}, 0.5), 2.5, 1e-15)
	near(t, "percentile q95", percentile([]float64{0, 10, 20, 30, 40}, 0.95), 38, 1e-12)
}
