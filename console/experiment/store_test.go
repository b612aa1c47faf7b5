package experiment

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

var t0 = time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)

// openDB opens (and, when migrate is set, migrates) a SQLite file the way
// the console does.
func openDB(t testing.TB, path string, migrate bool) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000&_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if migrate {
		for _, stmt := range Migrations() {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatalf("migration %q: %v", stmt, err)
			}
		}
	}
	return db
}

func newStore(t testing.TB, now time.Time) *Store {
	t.Helper()
	return NewStore(openDB(t, filepath.Join(t.TempDir(), "x.db"), true), func() time.Time { return now })
}

func TestMigrationsPrefixed(t *testing.T) {
	for _, stmt := range Migrations() {
		f := strings.Fields(stmt)
		if len(f) < 3 {
			t.Fatalf("statement %q", stmt)
		}
		name := f[2] // CREATE TABLE name, CREATE INDEX name
		if !strings.HasPrefix(name, "experiment_") {
			t.Errorf("%s %s is not prefixed experiment_", f[1], name)
		}
	}
}

func TestStoreLifecycle(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, t0)
	if _, err := s.Create(ctx, Experiment{Name: "bad", Unit: UnitViewer, Arms: []Arm{{Name: "only", Weight: 1}}}); err == nil {
		t.Error("one-arm experiment created")
	}
	def := twoArms("", 1, 1)
	def.Name = "lifecycle"
	e, err := s.Create(ctx, def)
	if err != nil {
		t.Fatal(err)
	}
	if e.ID == "" || e.State != StateDraft || !e.Created.Equal(t0) {
		t.Errorf("created %+v", e)
	}
	if _, err := s.Assign(ctx, e.ID, "s1", "v1", t0); !errors.Is(err, ErrState) {
		t.Errorf("assign in a draft: %v, want ErrState", err)
	}
	if _, err := s.Start(ctx, e.ID, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(ctx, e.ID, t0); !errors.Is(err, ErrState) {
		t.Errorf("second start: %v, want ErrState", err)
	}
	a1, err := s.Assign(ctx, e.ID, "s1", "v1", t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	a2, err := s.Assign(ctx, e.ID, "s2", "v1", t0.Add(time.Hour)) // the same viewer in another stream
	if err != nil || a2.Name != a1.Name {
		t.Errorf("viewer v1 got %s then %s (%v)", a1.Name, a2.Name, err)
	}
	if want, _ := e.Assign("v1"); want.Name != a1.Name {
		t.Errorf("store assigned %s, the hash says %s", a1.Name, want.Name)
	}
	if _, err := s.Stop(ctx, e.ID, t0.Add(-time.Hour)); err == nil {
		t.Error("stop before start accepted")
	}
	stopped, err := s.Stop(ctx, e.ID, t0.Add(2*time.Hour))
	if err != nil || stopped.State != StateStopped {
		t.Fatalf("stop: %+v, %v", stopped, err)
	}
	if _, err := s.Assign(ctx, e.ID, "s1", "v2", t0.Add(3*time.Hour)); !errors.Is(err, ErrState) {
		t.Errorf("assign after stop: %v, want ErrState", err)
	}
	got, err := s.Get(ctx, e.ID)
	if err != nil || !got.Started.Equal(t0) || !got.Stopped.Equal(t0.Add(2*time.Hour)) || got.State != StateStopped {
		t.Errorf("get: %+v, %v", got, err)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != e.ID {
		t.Errorf("list: %v, %v", list, err)
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("get unknown: %v", err)
	}
	if err := s.RecordTurn(ctx, TurnRecord{ID: "t", Experiment: e.ID, Stream: "s1", Arm: "control", Time: t0.Add(5 * time.Hour)}); !errors.Is(err, ErrState) {
		t.Errorf("turn after stop: %v", err)
	}
	if err := s.RecordTurn(ctx, TurnRecord{ID: "t", Experiment: e.ID, Stream: "s1", Arm: "ghost", Time: t0.Add(time.Hour)}); err == nil {
		t.Error("turn of an unknown arm accepted")
	}
}

// TestIngestValidatesAndIsIdempotent sends one batch with every kind of
// bad event, then the same batch again: the good events are stored once,
// duplicates are counted, and every rejection names its reason.
func TestIngestValidatesAndIsIdempotent(t *testing.T) {
	ctx := context.Background()
	now := t0.Add(time.Hour)
	s := newStore(t, now)
	e, err := s.Create(ctx, twoArms("tagged", 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(ctx, e.ID, t0); err != nil {
		t.Fatal(err)
	}
	done, _ := s.Create(ctx, twoArms("done", 1, 1))
	s.Start(ctx, done.ID, t0)
	s.Stop(ctx, done.ID, t0.Add(10*time.Minute))
	v := NewValidator([]string{"A", "B"}, 2*time.Second, func() time.Time { return now })
	arm, _ := e.Assign("v1")
	other := "control"
	if arm.Name == "control" {
		other = "treatment"
	}
	ok := func(id string) Event {
		return Event{ID: id, Stream: "s1", Viewer: "v1", Item: "A", Kind: KindPurchase, AmountMinor: 1999, Currency: "CNY", Time: t0.Add(30 * time.Minute)}
	}
	with := func(id string, f func(*Event)) Event { ev := ok(id); f(&ev); return ev }
	batch := []Event{
		ok("e1"),
		with("e2", func(ev *Event) { ev.Kind, ev.AmountMinor, ev.Currency = KindItemView, 0, "" }),
		ok("e1"), // a duplicate inside the batch
		with("e3", func(ev *Event) { ev.Item = "Z" }),
		with("e4", func(ev *Event) { ev.AmountMinor = -5 }),
		with("e5", func(ev *Event) { ev.Currency = "" }),
		with("e6", func(ev *Event) { ev.Time = now.Add(time.Minute) }),
		with("e7", func(ev *Event) { ev.Time = now.Add(time.Second) }), // within the skew tolerance
		with("e8", func(ev *Event) { ev.Experiment = "ghost" }),
		with("e9", func(ev *Event) { ev.Experiment, ev.Arm = e.ID, "ghost-arm" }),
		with("e10", func(ev *Event) { ev.Experiment = done.ID }),
		with("e11", func(ev *Event) { ev.Experiment, ev.Arm = e.ID, other }),
		with("e12", func(ev *Event) { ev.Experiment, ev.Arm = e.ID, arm.Name }),
		with("e13", func(ev *Event) { ev.Kind = "refund" }),
		with("", func(ev *Event) {}),
		with("e14", func(ev *Event) { ev.Kind = KindLinkClick }), // a link click with an amount
		with("e15", func(ev *Event) { ev.Time = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC) }),
	}
	want := []struct {
		status EventStatus
		reason string
	}{
		{StatusAccepted, ""}, {StatusAccepted, ""}, {StatusDuplicate, "already stored"},
		{StatusRejected, "not in the catalog"}, {StatusRejected, "negative"}, {StatusRejected, "currency is missing"},
		{StatusRejected, "in the future"}, {StatusAccepted, ""}, {StatusRejected, "unknown"},
		{StatusRejected, "not an arm"}, {StatusRejected, "finished"}, {StatusRejected, "is assigned to"},
		{StatusAccepted, ""}, {StatusRejected, "kind"}, {StatusRejected, "id is empty"}, {StatusRejected, "only purchases"},
		{StatusRejected, "out of range"},
	}
	res, err := s.Ingest(ctx, batch, v)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		r := res.Events[i]
		if r.Index != i || r.Status != w.status || !strings.Contains(r.Reason, w.reason) {
			t.Errorf("event %d (%s): %s %q, want %s %q", i, batch[i].ID, r.Status, r.Reason, w.status, w.reason)
		}
	}
	if res.Accepted != 4 || res.Duplicates != 1 || res.Rejected != 12 {
		t.Errorf("counts %d/%d/%d, want 4 accepted, 1 duplicate, 12 rejected", res.Accepted, res.Duplicates, res.Rejected)
	}
	again, err := s.Ingest(ctx, batch, v)
	if err != nil {
		t.Fatal(err)
	}
	if again.Accepted != 0 || again.Duplicates != 5 {
		t.Errorf("re-sent batch: %d accepted, %d duplicates; want 0 and 5", again.Accepted, again.Duplicates)
	}
	conflict, _ := s.Ingest(ctx, []Event{with("e1", func(ev *Event) { ev.AmountMinor = 1 })}, v)
	if conflict.Rejected != 1 || !strings.Contains(conflict.Events[0].Reason, "different content") {
		t.Errorf("reused id with new content: %+v", conflict)
	}
	if n, err := s.CountEvents(ctx); err != nil || n != 4 {
		t.Errorf("stored %d events (%v), want 4", n, err)
	}
	if _, err := s.Ingest(ctx, make([]Event, MaxBatch+1), v); err == nil {
		t.Error("oversized batch accepted")
	}
}

const helperEnv = "EXPERIMENT_INGEST_HELPER_DB"

// TestIngestHelperProcess is the child of TestKillLosesNoCommittedEvent:
// it ingests batches of 50 events forever, printing each committed batch.
func TestIngestHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("run by TestKillLosesNoCommittedEvent")
	}
	s := NewStore(openDB(t, path, false), nil)
	v := NewValidator([]string{"A"}, time.Minute, func() time.Time { return t0.Add(time.Hour) })
	for b := 0; ; b++ {
		batch := make([]Event, 50)
		for i := range batch {
			batch[i] = Event{ID: fmt.Sprintf("b%d-e%d", b, i), Stream: "s", Viewer: fmt.Sprintf("v%d", i), Item: "A", Kind: KindItemView, Time: t0}
		}
		res, err := s.Ingest(context.Background(), batch, v)
		if err != nil || res.Accepted != 50 {
			fmt.Printf("error %v %+v\n", err, res)
			os.Exit(2)
		}
		fmt.Printf("committed %d\n", b)
	}
}

// TestKillLosesNoCommittedEvent kills an ingesting process with SIGKILL
// after it reported 20 committed batches, reopens the database and checks
// that every reported batch is there in full and no batch is there in
// part.
func TestKillLosesNoCommittedEvent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kill.db")
	openDB(t, path, true).Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestIngestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	last := -1
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "committed %d", &last); err != nil {
			t.Errorf("child: %s", sc.Text())
			continue
		}
		if last >= 20 {
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if last < 20 {
		t.Fatalf("child reported %d batches before it stopped", last+1)
	}
	db := openDB(t, path, false)
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM experiment_events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n < 50*(last+1) || n%50 != 0 {
		t.Errorf("after the kill %d events are stored; the child reported %d full batches (want ≥ %d, a multiple of 50)", n, last+1, 50*(last+1))
	}
	for b := 0; b <= last; b++ {
		var k int
		db.QueryRow(`SELECT COUNT(*) FROM experiment_events WHERE id LIKE ?`, fmt.Sprintf("b%d-%%", b)).Scan(&k)
		if k != 50 {
			t.Errorf("reported batch %d has %d of 50 events", b, k)
		}
	}
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %q, %v", check, err)
	}
}

// handViewers finds n viewer ids per arm of e, in a fixed order.
func handViewers(t *testing.T, e Experiment, n int) (control, treatment []string) {
	for i := 0; len(control) < n || len(treatment) < n; i++ {
		v := fmt.Sprintf("viewer-%d", i)
		a, err := e.Assign(v)
		if err != nil {
			t.Fatal(err)
		}
		if a.Name == "control" && len(control) < n {
			control = append(control, v)
		} else if a.Name == "treatment" && len(treatment) < n {
			treatment = append(treatment, v)
		}
	}
	return control, treatment
}

// TestReportByHand runs a small experiment through the store and checks
// the report against numbers worked out by hand (see the comments), and
// that a second report from the same stored data is identical.
func TestReportByHand(t *testing.T) {
	ctx := context.Background()
	end := t0.Add(2 * time.Hour)
	s := newStore(t, end)
	def := twoArms("hand", 1, 1)
	def.AttributionWindow = 10 * time.Minute
	def.PlannedUnitsPerArm = 3
	def.Guardrails = []Metric{MetricViolationsPer1000}
	e, err := s.Create(ctx, def)
	if err != nil {
		t.Fatal(err)
	}
	s.Start(ctx, e.ID, t0)
	c, tr := handViewers(t, e, 3)
	for _, v := range append(append([]string{}, c...), tr...) {
		if _, err := s.Assign(ctx, e.ID, "s1", v, t0); err != nil {
			t.Fatal(err)
		}
	}
	// One stream on air for 2 h, restarted after 1 h: two sessions.
	s.RecordSession(ctx, StreamSession{ID: "sess-1", Stream: "s1", Start: t0, End: t0.Add(time.Hour)})
	s.RecordSession(ctx, StreamSession{ID: "sess-2", Stream: "s1", Start: t0.Add(time.Hour), End: end})
	min := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	turns := []TurnRecord{
		{ID: "tc", Stream: "s1", Viewer: c[0], Arm: "control", Time: min(1), Latency: 2 * time.Second, Items: []string{"A"}},
		{ID: "tt", Stream: "s1", Viewer: tr[0], Arm: "treatment", Time: min(1), Latency: 3 * time.Second, Items: []string{"A"}, Violation: true},
	}
	for _, tu := range turns {
		tu.Experiment = e.ID
		if err := s.RecordTurn(ctx, tu); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordTurn(ctx, tu); err != nil { // recorded twice, kept once
			t.Fatal(err)
		}
	}
	buy := func(id, viewer string, at time.Time, fen int64, cur string) Event {
		return Event{ID: id, Stream: "s1", Viewer: viewer, Item: "A", Kind: KindPurchase, AmountMinor: fen, Currency: cur, Time: at}
	}
	do := func(id, viewer string, at time.Time, k EventKind) Event {
		return Event{ID: id, Stream: "s1", Viewer: viewer, Item: "A", Kind: k, Time: at}
	}
	events := []Event{
		buy("p1", c[0], min(5), 10000, "CNY"), // attributed: 4 min after the control's mention
		buy("p2", c[1], min(20), 5000, "CNY"), // 19 min after: outside the 10-min window
		do("v1", c[2], min(2), KindItemView),  // attributed view
		buy("p3", tr[0], min(3), 3000, "CNY"), // attributed
		buy("p4", tr[1], min(4), 6000, "CNY"), // attributed
		do("v2", tr[2], min(5), KindItemView), // attributed view
		do("k1", tr[2], min(5), KindCouponClaim),
		buy("p5", tr[0], min(6), 999, "USD"),      // another currency: counted apart
		buy("p6", "stranger", min(5), 100, "CNY"), // never exposed
	}
	v := NewValidator([]string{"A"}, 0, func() time.Time { return end })
	if _, err := s.Ingest(ctx, events, v); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ingest(ctx, events, v); err != nil { // re-sent: must not double count
		t.Fatal(err)
	}
	s.Stop(ctx, e.ID, end)
	rep, err := s.Report(ctx, e.ID, AnalyzeOptions{Resamples: 500})
	if err != nil {
		t.Fatal(err)
	}
	ctl, trt := rep.Arms[0], rep.Arms[1]
	val := func(a ArmResult, m Metric) float64 { x, _ := a.Metric(m); return x.Value }
	// Control: GMV 100 yuan (p1 only) over 3 viewers; 1 buyer, 1 view, no
	// coupon. Treatment: 30 + 60 = 90 yuan; 2 buyers; 1 view; 1 coupon.
	near(t, "control GMV/viewer", val(ctl, MetricGMVPerViewer), 100.0/3, 1e-12)
	near(t, "treatment GMV/viewer", val(trt, MetricGMVPerViewer), 30, 1e-12)
	near(t, "control conversion", val(ctl, MetricConversionRate), 1.0/3, 1e-12)
	near(t, "treatment conversion", val(trt, MetricConversionRate), 2.0/3, 1e-12)
	near(t, "views/viewer", val(trt, MetricItemViewsPerViewer), 1.0/3, 1e-12)
	near(t, "coupon use", val(trt, MetricCouponUse), 1.0/3, 1e-12)
	// 2 h on air shared by 6 viewers: each arm holds 1 stream-hour.
	near(t, "control stream hours", ctl.StreamHours, 1, 1e-12)
	near(t, "control GMV/stream-hour", val(ctl, MetricGMVPerStreamHour), 100, 1e-9)
	near(t, "treatment GMV/stream-hour", val(trt, MetricGMVPerStreamHour), 90, 1e-9)
	near(t, "treatment violations/1000", val(trt, MetricViolationsPer1000), 1000, 1e-9)
	near(t, "control latency P95", val(ctl, MetricLatencyP95), 2, 1e-12)
	if ctl.GMVMinor != 10000 || trt.GMVMinor != 9000 || ctl.Replies != 1 || trt.Events[KindPurchase] != 2 {
		t.Errorf("arm totals: %+v / %+v", ctl, trt)
	}
	x := rep.Excluded
	if x.NotAttributed != 1 || x.OtherCurrency != 1 || x.Unexposed != 1 {
		t.Errorf("exclusions %+v, want 1 not attributed, 1 other currency, 1 unexposed", x)
	}
	// Welch on GMV per viewer: control 100, 0, 0 (mean 33.33, variance
	// 3333.33), treatment 30, 60, 0 (mean 30, variance 900): diff −3.333,
	// se² = 3333.33/3 + 900/3 = 1411.11, df = 1411.11² / (1111.11²/2 +
	// 300²/2) = 3.00663.
	g, _ := rep.Comparison("treatment", MetricGMVPerViewer)
	near(t, "GMV diff", g.Diff, -10.0/3, 1e-9)
	near(t, "GMV df", g.DF, math.Pow(1411.0+1.0/9, 2)/(math.Pow(1111.0+1.0/9, 2)/2+300*300/2), 1e-6)
	near(t, "GMV ci half", (g.DiffCI.Hi-g.DiffCI.Lo)/2, studentTQuantile(0.975, g.DF)*math.Sqrt(1411.0+1.0/9), 1e-6)
	if g.Basis != BasisBootstrap || g.BootstrapDiffCI == nil {
		t.Errorf("GMV comparison basis %s, bootstrap %v", g.Basis, g.BootstrapDiffCI)
	}
	if rep.SRM.PValue != 1 || rep.SRM.Mismatch {
		t.Errorf("3 vs 3 SRM: %+v", rep.SRM)
	}
	if !rep.Verdict.Allowed || rep.Verdict.Decision != DecisionKeepControl {
		t.Errorf("verdict %+v, want an allowed keep_control", rep.Verdict)
	}
	again, err := s.Report(ctx, e.ID, AnalyzeOptions{Resamples: 500})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep, again) {
		t.Error("two reports from the same stored data differ")
	}
}

// TestConcurrentIngest: two writers send the same 200 events in opposite
// orders at once; each event is accepted exactly once.
func TestConcurrentIngest(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, t0)
	v := NewValidator([]string{"A"}, time.Minute, func() time.Time { return t0 })
	events := make([]Event, 200)
	for i := range events {
		events[i] = Event{ID: fmt.Sprintf("e%d", i), Stream: "s", Viewer: "v", Item: "A", Kind: KindLinkClick, Time: t0}
	}
	reversed := slices.Clone(events)
	slices.Reverse(reversed)
	results := make([]BatchResult, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for w, list := range [][]Event{events, reversed} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for from := 0; from < len(list); from += 20 {
				r, err := s.Ingest(ctx, list[from:from+20], v)
				if err != nil {
					errs[w] = err
					return
				}
				results[w].Accepted += r.Accepted
				results[w].Duplicates += r.Duplicates
			}
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if a, d := results[0].Accepted+results[1].Accepted, results[0].Duplicates+results[1].Duplicates; a != 200 || d != 200 {
		t.Errorf("accepted %d and duplicates %d over both writers, want 200 and 200", a, d)
	}
	if n, _ := s.CountEvents(ctx); n != 200 {
		t.Errorf("stored %d", n)
	}
}

// TestStorePrePeriodCUPED: with a pre-period, the store reads the units'
// purchases before the start as CUPED covariates of the primary metric.
// Each viewer spends the same in the pre-period as during the
// experiment, plus 10 yuan in the treatment, so CUPED removes nearly all
// variance and finds the 10 yuan.
func TestStorePrePeriodCUPED(t *testing.T) {
	ctx := context.Background()
	end := t0.Add(time.Hour)
	s := newStore(t, end)
	def := twoArms("cuped", 1, 1)
	def.PrePeriod = 7 * 24 * time.Hour
	def.PlannedUnitsPerArm = 10
	e, err := s.Create(ctx, def)
	if err != nil {
		t.Fatal(err)
	}
	s.Start(ctx, e.ID, t0)
	var events []Event
	for i := range 40 {
		v := fmt.Sprintf("viewer-%d", i)
		arm, err := s.Assign(ctx, e.ID, "s1", v, t0)
		if err != nil {
			t.Fatal(err)
		}
		spend := int64(1000 * (1 + i%7))
		events = append(events, Event{ID: v + "-pre", Stream: "s1", Viewer: v, Item: "A", Kind: KindPurchase, AmountMinor: spend, Currency: "CNY", Time: t0.Add(-48 * time.Hour)})
		if arm.Name == "treatment" {
			spend += 1000
		}
		events = append(events, Event{ID: v + "-buy", Stream: "s1", Viewer: v, Item: "A", Kind: KindPurchase, AmountMinor: spend, Currency: "CNY", Time: t0.Add(time.Minute)})
	}
	if res, err := s.Ingest(ctx, events, NewValidator([]string{"A"}, 0, func() time.Time { return end })); err != nil || res.Accepted != 80 {
		t.Fatalf("ingest: %+v, %v", res, err)
	}
	s.Stop(ctx, e.ID, end)
	rep, err := s.Report(ctx, e.ID, AnalyzeOptions{Resamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := rep.Comparison("treatment", MetricGMVPerViewer)
	if rep.Excluded.PrePeriod != 40 || g.CUPED == nil || g.Basis != BasisCUPED {
		t.Fatalf("pre-period events %d, CUPED %+v", rep.Excluded.PrePeriod, g.CUPED)
	}
	near(t, "CUPED difference", g.CUPED.Diff, 10, 1e-9)
	if g.CUPED.VarianceReduction < 0.99 || !g.Better {
		t.Errorf("CUPED variance reduction %.3f, better %v", g.CUPED.VarianceReduction, g.Better)
	}
}
