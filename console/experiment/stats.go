package experiment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// normalCDF is the standard normal distribution function.
func normalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// normalQuantile is the inverse of normalCDF.
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// regIncBeta is the regularized incomplete beta function I_x(a, b),
// evaluated by its continued fraction (modified Lentz), using the symmetry
// I_x(a,b) = 1 − I_{1−x}(b,a) where the fraction converges slowly.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, 1-x)/b
}

func betaFraction(a, b, x float64) float64 {
	const tiny = 1e-300
	clamp := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/clamp(1-(a+b)*x/(a+1))
	h := d
	for m := 1; m <= 500; m++ {
		fm := float64(m)
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 / clamp(1+num*d)
		c = clamp(1 + num/c)
		h *= d * c
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 / clamp(1+num*d)
		c = clamp(1 + num/c)
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return h
}

// studentTCDF is the distribution function of Student's t with df degrees
// of freedom (df may be fractional, as Welch's is).
func studentTCDF(t, df float64) float64 {
	if math.IsInf(df, 1) || df > 1e8 {
		return normalCDF(t)
	}
	tail := 0.5 * regIncBeta(df/2, 0.5, df/(df+t*t))
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// studentTQuantile inverts studentTCDF by bisection: the distribution
// function is monotone, and 200 halvings of a bracket reach float64
// precision for any df.
func studentTQuantile(p, df float64) float64 {
	if math.IsInf(df, 1) || df > 1e8 {
		return normalQuantile(p)
	}
	lo, hi := -1.0, 1.0
	for studentTCDF(lo, df) > p {
		lo *= 2
	}
	for studentTCDF(hi, df) < p {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if studentTCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-13*math.Max(1, math.Abs(mid)) {
			break
		}
	}
	return (lo + hi) / 2
}

// regGammaQ is the regularized upper incomplete gamma function Q(a, x):
// a series for x < a+1, a continued fraction beyond.
func regGammaQ(a, x float64) float64 {
	if x <= 0 {
		return 1
	}
	lg, _ := math.Lgamma(a)
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1; n < 1000; n++ {
			term *= x / (a + float64(n))
			sum += term
			if math.Abs(term) < math.Abs(sum)*1e-16 {
				break
			}
		}
		return 1 - sum*math.Exp(-x+a*math.Log(x)-lg)
	}
	const tiny = 1e-300
	b := x + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1; i < 1000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return math.Exp(-x+a*math.Log(x)-lg) * h
}

// chiSquareSurvival is P(X > x) for X chi-square with k degrees of freedom.
func chiSquareSurvival(x float64, k int) float64 { return regGammaQ(float64(k)/2, x/2) }

// SRM is the sample-ratio-mismatch check: Pearson's chi-square test of
// the units each arm got against the split the weights promise. A tiny
// p-value means assignment or logging is broken, and no metric of the
// experiment can be trusted until it is explained.
type SRM struct {
	Observed  []int     `json:"observed"`
	Expected  []float64 `json:"expected"`
	ChiSquare float64   `json:"chi_square"`
	DF        int       `json:"df"`
	PValue    float64   `json:"p_value"`
	// Mismatch is PValue below SRMThreshold.
	Mismatch bool `json:"mismatch"`
}

// SRMThreshold is the p-value under which the split is called broken. It
// is far below the usual 0.05 because the check runs on every report and
// a false alarm stops an experiment.
const SRMThreshold = 0.001

// CheckSRM runs the sample-ratio-mismatch test on the units observed per
// arm and the arms' traffic weights.
func CheckSRM(observed []int, weights []float64) (SRM, error) {
	if len(observed) != len(weights) || len(observed) < 2 {
		return SRM{}, fmt.Errorf("experiment: SRM needs one count per arm and at least two arms, got %d counts and %d weights", len(observed), len(weights))
	}
	var n, w float64
	for i, o := range observed {
		if o < 0 || !(weights[i] > 0) {
			return SRM{}, fmt.Errorf("experiment: SRM: arm %d has count %d and weight %v", i, o, weights[i])
		}
		n += float64(o)
		w += weights[i]
	}
	r := SRM{Observed: slices.Clone(observed), DF: len(observed) - 1, PValue: 1}
	for i, o := range observed {
		exp := n * weights[i] / w
		r.Expected = append(r.Expected, exp)
		if exp > 0 {
			r.ChiSquare += (float64(o) - exp) * (float64(o) - exp) / exp
		}
	}
	if n > 0 {
		r.PValue = chiSquareSurvival(r.ChiSquare, r.DF)
	}
	r.Mismatch = r.PValue < SRMThreshold
	return r, nil
}

// PlanSampleSize returns the units each arm needs for a two-sided test at
// level alpha to detect a relative change mde of a metric with the given
// baseline mean and per-unit standard deviation with the given power:
// n = 2 (z_{1−α/2} + z_{power})² σ² / (mde · mean)².
func PlanSampleSize(baselineMean, sd, mde, alpha, power float64) (int, error) {
	switch {
	case baselineMean == 0 || math.IsNaN(baselineMean) || math.IsInf(baselineMean, 0):
		return 0, fmt.Errorf("experiment: plan: baseline mean %v must be a non-zero number", baselineMean)
	case !(sd > 0) || math.IsInf(sd, 0):
		return 0, fmt.Errorf("experiment: plan: standard deviation %v must be positive", sd)
	case !(mde > 0):
		return 0, fmt.Errorf("experiment: plan: minimum detectable effect %v must be positive", mde)
	case !(alpha > 0 && alpha < 1):
		return 0, fmt.Errorf("experiment: plan: alpha %v must be in (0, 1)", alpha)
	case !(power > 0 && power < 1):
		return 0, fmt.Errorf("experiment: plan: power %v must be in (0, 1)", power)
	}
	z := normalQuantile(1-alpha/2) + normalQuantile(power)
	delta := mde * math.Abs(baselineMean)
	return int(math.Ceil(2 * z * z * sd * sd / (delta * delta))), nil
}

// sample is one arm's per-unit values of a ratio metric: the metric is
// Σnum / Σden (a mean when every den is 1), and cov, when present, is the
// unit's pre-period covariate for CUPED.
type sample struct {
	num, den, cov []float64
}

func (s sample) n() int { return len(s.num) }

// ratio is Σnum / Σden.
func (s sample) ratio() float64 {
	var a, b float64
	for i := range s.num {
		a += s.num[i]
		b += s.den[i]
	}
	if b == 0 {
		return 0
	}
	return a / b
}

// linearized returns the delta-method influence values of the ratio,
// z_i = (num_i − R·den_i) / mean(den): their variance over n is the
// variance of R (for a plain mean, z_i = y_i − ȳ).
func (s sample) linearized() []float64 {
	r := s.ratio()
	var sumDen float64
	for _, d := range s.den {
		sumDen += d
	}
	meanDen := sumDen / float64(len(s.den))
	z := make([]float64, len(s.num))
	for i := range s.num {
		if meanDen > 0 {
			z[i] = (s.num[i] - r*s.den[i]) / meanDen
		}
	}
	return z
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// variance is the sample variance (n − 1 in the denominator).
func variance(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return ss / float64(len(xs)-1)
}

func covariance(xs, ys []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	mx, my := mean(xs), mean(ys)
	var s float64
	for i := range xs {
		s += (xs[i] - mx) * (ys[i] - my)
	}
	return s / float64(len(xs)-1)
}

// estimate is an arm's metric value with the variance of that value and
// the unit count behind it.
type estimate struct {
	value, variance float64
	n               int
}

// welchResult is a two-sample comparison of treatment minus control.
type welchResult struct {
	diff, se, df, t, p float64
	lo, hi             float64
	// uplift is diff / control with its delta-method interval; ok is false
	// when the control is 0 and uplift is undefined.
	uplift, upLo, upHi float64
	upliftOK           bool
}

// welch compares two estimates with Welch's t: the difference, its
// standard error √(v_c + v_t), Welch–Satterthwaite degrees of freedom
// (v_c + v_t)² / (v_c²/(n_c−1) + v_t²/(n_t−1)) and the interval at level
// alpha from Student's t with those degrees of freedom.
func welch(c, t estimate, alpha float64) welchResult {
	r := welchResult{diff: t.value - c.value, p: 1}
	v := c.variance + t.variance
	r.se = math.Sqrt(v)
	den := 0.0
	if c.n > 1 {
		den += c.variance * c.variance / float64(c.n-1)
	}
	if t.n > 1 {
		den += t.variance * t.variance / float64(t.n-1)
	}
	switch {
	case den > 0:
		r.df = v * v / den
	default:
		r.df = math.Max(1, float64(c.n+t.n-2))
	}
	q := studentTQuantile(1-alpha/2, r.df)
	r.lo, r.hi = r.diff-q*r.se, r.diff+q*r.se
	switch {
	case r.se > 0:
		r.t = r.diff / r.se
		r.p = 2 * studentTCDF(-math.Abs(r.t), r.df) // the lower tail keeps tiny p-values from rounding to 0
	case r.diff != 0:
		r.p = 0 // no variance at all and a difference: every unit agrees
	}
	if c.value != 0 {
		r.upliftOK = true
		r.uplift = t.value/c.value - 1
		seUp := math.Sqrt(t.variance/(c.value*c.value) + t.value*t.value*c.variance/math.Pow(c.value, 4))
		r.upLo, r.upHi = r.uplift-q*seUp, r.uplift+q*seUp
	}
	return r
}

// ratioEstimate is a sample's metric with its delta-method variance.
func ratioEstimate(s sample) estimate {
	return estimate{value: s.ratio(), variance: variance(s.linearized()) / float64(s.n()), n: s.n()}
}

// cupedEstimates adjusts both arms with the pre-period covariate: θ is the
// pooled within-arm regression slope of the linearized metric on the
// covariate, and each arm's value moves by −θ(x̄_arm − x̄), where x̄ is the
// mean over both arms, so the difference loses the part the pre-period
// already explains. ok is false when no covariate varies.
func cupedEstimates(c, t sample) (ec, et estimate, theta float64, ok bool) {
	if len(c.cov) != c.n() || len(t.cov) != t.n() || c.n() < 2 || t.n() < 2 {
		return estimate{}, estimate{}, 0, false
	}
	zc, zt := c.linearized(), t.linearized()
	vx := variance(c.cov)*float64(c.n()-1) + variance(t.cov)*float64(t.n()-1)
	if !(vx > 0) {
		return estimate{}, estimate{}, 0, false
	}
	theta = (covariance(zc, c.cov)*float64(c.n()-1) + covariance(zt, t.cov)*float64(t.n()-1)) / vx
	all := append(slices.Clone(c.cov), t.cov...)
	xbar := mean(all)
	adjust := func(s sample, z []float64) estimate {
		adj := make([]float64, len(z))
		for i := range z {
			adj[i] = z[i] - theta*s.cov[i]
		}
		return estimate{value: s.ratio() - theta*(mean(s.cov)-xbar), variance: variance(adj) / float64(s.n()), n: s.n()}
	}
	return adjust(c, zc), adjust(t, zt), theta, true
}

// bootstrapResult is a percentile bootstrap of treatment minus control.
type bootstrapResult struct {
	lo, hi, upLo, upHi float64
	upliftOK           bool
	resamples          int
}

// bootstrapRatio resamples the units of each arm independently (with
// replacement, resamples times, from a PCG seeded with seed) and returns
// percentile intervals at level alpha of the difference and the relative
// uplift of the ratio metric. It makes no normality assumption, which
// GMV — most viewers buy nothing, a few buy a lot — does not meet.
func bootstrapRatio(c, t sample, resamples int, alpha float64, seed uint64) bootstrapResult {
	rng := rand.New(rand.NewPCG(seed, 0x626f6f7473747270)) // "bootstrp"
	diffs := make([]float64, 0, resamples)
	ups := make([]float64, 0, resamples)
	draw := func(s sample) (float64, bool) {
		var a, b float64
		n := s.n()
		for range n {
			i := rng.IntN(n)
			a += s.num[i]
			b += s.den[i]
		}
		return a / b, b > 0
	}
	for range resamples {
		rc, okc := draw(c)
		rt, okt := draw(t)
		if !okc || !okt {
			continue
		}
		diffs = append(diffs, rt-rc)
		if rc != 0 {
			ups = append(ups, rt/rc-1)
		}
	}
	r := bootstrapResult{resamples: len(diffs)}
	if len(diffs) == 0 {
		return r
	}
	r.lo, r.hi = percentile(diffs, alpha/2), percentile(diffs, 1-alpha/2)
	// The uplift interval is only meaningful when (nearly) every resample
	// had a non-zero control.
	if len(ups) >= len(diffs)*99/100 {
		r.upliftOK = true
		r.upLo, r.upHi = percentile(ups, alpha/2), percentile(ups, 1-alpha/2)
	}
	return r
}

// percentile is the q-quantile of xs with linear interpolation between
// order statistics (the "type 7" rule of R and NumPy). It sorts xs.
func percentile(xs []float64, q float64) float64 {
	slices.Sort(xs)
	if len(xs) == 1 {
		return xs[0]
	}
	h := q * float64(len(xs)-1)
	i := int(math.Floor(h))
	if i >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[i] + (h-float64(i))*(xs[i+1]-xs[i])
}

// bootstrapQuantileDiff is a percentile bootstrap interval of the
// difference of the q-quantiles of two samples (used for latency P95).
func bootstrapQuantileDiff(c, t []float64, q float64, resamples int, alpha float64, seed uint64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(seed, 0x7175616e74696c65)) // "quantile"
	diffs := make([]float64, resamples)
	bc, bt := make([]float64, len(c)), make([]float64, len(t))
	for k := range resamples {
		for i := range bc {
			bc[i] = c[rng.IntN(len(c))]
		}
		for i := range bt {
			bt[i] = t[rng.IntN(len(t))]
		}
		diffs[k] = percentile(bt, q) - percentile(bc, q)
	}
	return percentile(diffs, alpha/2), percentile(diffs, 1-alpha/2)
}

// msprt is the always-valid test of a difference θ̂ with variance v
// (Johari, Pekelis and Walsh, "Always valid inference", 2017), with a
// normal mixture N(0, τ²) over the effect:
//
//	Λ = √(v/(v+τ²)) · exp(τ² θ̂² / (2 v (v+τ²)))
//
// The p-value 1/Λ (capped at 1) and the interval
// θ̂ ± √(2 v (v+τ²)/τ² · (ln(1/α) + ½ ln((v+τ²)/v))) hold at level α
// however many times the data are looked at. Reading the current value
// rather than the running minimum over past looks only makes it more
// conservative.
func msprt(diff, v, tau2, alpha float64) (p, lo, hi float64) {
	if !(v > 0) || !(tau2 > 0) {
		// No variance: every unit agrees, as in welch.
		if diff != 0 && v == 0 {
			return 0, diff, diff
		}
		return 1, diff, diff
	}
	logLambda := 0.5*math.Log(v/(v+tau2)) + tau2*diff*diff/(2*v*(v+tau2))
	p = math.Min(1, math.Exp(-logLambda))
	half := math.Sqrt(2 * v * (v + tau2) / tau2 * (math.Log(1/alpha) + 0.5*math.Log((v+tau2)/v)))
	return p, diff - half, diff + half
}
