package experiment

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// UnitID is the id an experiment assigns for a stream's viewer: the stream
// for a stream-unit experiment, the viewer for a viewer-unit one.
func (e Experiment) UnitID(streamID, viewerID string) (string, error) {
	switch e.Unit {
	case UnitStream:
		if streamID == "" {
			return "", errors.New("experiment: stream-unit assignment needs a stream id")
		}
		return streamID, nil
	case UnitViewer:
		if viewerID == "" {
			return "", errors.New("experiment: viewer-unit assignment needs a viewer id")
		}
		return viewerID, nil
	}
	return "", fmt.Errorf("experiment: unknown unit %q", e.Unit)
}

// Assign returns the arm a unit (a stream or viewer id) belongs to. It is a
// pure function of the experiment id, the unit id and the arms' weights:
// sha256(experiment id, 0, unit id) read as a number in [0, 1) falls into
// one arm's slice of the cumulative weights. So a viewer keeps their arm
// across sessions, restarts and machines, and the assignments of two
// experiments are independent.
func (e Experiment) Assign(unitID string) (Arm, error) {
	if len(e.Arms) == 0 {
		return Arm{}, fmt.Errorf("experiment %q has no arms", e.ID)
	}
	if unitID == "" {
		return Arm{}, fmt.Errorf("experiment %q: empty unit id", e.ID)
	}
	var total float64
	for _, a := range e.Arms {
		if !(a.Weight > 0) {
			return Arm{}, fmt.Errorf("experiment %q: arm %q has weight %v", e.ID, a.Name, a.Weight)
		}
		total += a.Weight
	}
	u := hashUnit(e.ID, unitID) * total
	for _, a := range e.Arms {
		if u < a.Weight {
			return a, nil
		}
		u -= a.Weight
	}
	return e.Arms[len(e.Arms)-1], nil // rounding at the top end
}

// hashUnit maps (experiment, unit) to a uniform number in [0, 1) from the
// top 53 bits of a sha256, the precision of a float64 mantissa.
func hashUnit(experimentID, unitID string) float64 {
	h := sha256.New()
	h.Write([]byte(experimentID))
	h.Write([]byte{0}) // ("ab","c") and ("a","bc") must differ
	h.Write([]byte(unitID))
	sum := h.Sum(nil)
	return float64(binary.BigEndian.Uint64(sum[:8])>>11) / (1 << 53)
}
