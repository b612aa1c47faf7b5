package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// runMigrations are this area's tables: training runs, evaluations with
// their graded items, and per-organisation settings (the serving model).
func runMigrations() []Migration {
	return []Migration{
		{Version: 30, Name: "training runs, evaluations and org settings", SQL: []string{
			`CREATE TABLE training_runs (
				id TEXT PRIMARY KEY,
				org_id TEXT NOT NULL REFERENCES orgs(id),
				name TEXT NOT NULL,
				stage TEXT NOT NULL,
				config TEXT NOT NULL,
				state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'stopped', 'failed', 'done', 'interrupted')),
				dir TEXT NOT NULL,
				step INTEGER NOT NULL DEFAULT 0,
				steps INTEGER NOT NULL DEFAULT 0,
				error TEXT NOT NULL DEFAULT '',
				created_by TEXT NOT NULL,
				created_at TEXT NOT NULL,
				updated_at TEXT NOT NULL,
				started_at TEXT NOT NULL DEFAULT '',
				finished_at TEXT NOT NULL DEFAULT '')`,
			`CREATE INDEX training_runs_org ON training_runs(org_id, created_at)`,
			`CREATE TABLE evaluations (
				id TEXT PRIMARY KEY,
				org_id TEXT NOT NULL REFERENCES orgs(id),
				suite TEXT NOT NULL,
				n INTEGER NOT NULL,
				model_kind TEXT NOT NULL,
				model_ref TEXT NOT NULL DEFAULT '',
				model_name TEXT NOT NULL,
				harness_version TEXT NOT NULL,
				state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'stopped', 'failed', 'done', 'interrupted')),
				done INTEGER NOT NULL DEFAULT 0,
				total INTEGER NOT NULL DEFAULT 0,
				score REAL,
				report TEXT NOT NULL DEFAULT '{}',
				error TEXT NOT NULL DEFAULT '',
				created_by TEXT NOT NULL,
				created_at TEXT NOT NULL,
				updated_at TEXT NOT NULL,
				started_at TEXT NOT NULL DEFAULT '',
				finished_at TEXT NOT NULL DEFAULT '')`,
			`CREATE INDEX evaluations_org ON evaluations(org_id, suite, created_at)`,
			`CREATE TABLE eval_items (
				eval_id TEXT NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
				idx INTEGER NOT NULL,
				item_id TEXT NOT NULL,
				category TEXT NOT NULL,
				question TEXT NOT NULL,
				reply TEXT NOT NULL,
				score REAL NOT NULL,
				grade TEXT NOT NULL,
				outcome TEXT NOT NULL,
				error TEXT NOT NULL DEFAULT '',
				took_ms REAL NOT NULL,
				harness_version TEXT NOT NULL,
				PRIMARY KEY (eval_id, item_id))`,
			`CREATE TABLE org_settings (
				org_id TEXT NOT NULL REFERENCES orgs(id),
				name TEXT NOT NULL,
				value TEXT NOT NULL,
				updated_by TEXT NOT NULL,
				updated_at TEXT NOT NULL,
				PRIMARY KEY (org_id, name))`,
		}},
	}
}

// JobState is where a training run or an evaluation is in its life.
type JobState string

// The states of runs and evaluations. Queued and running are live; the
// others are final until a run is resumed (back to queued).
const (
	JobQueued  JobState = "queued"
	JobRunning JobState = "running"
	JobStopped JobState = "stopped"
	JobFailed  JobState = "failed"
	JobDone    JobState = "done"
	// JobInterrupted marks a job that was live when the console process
	// ended without finishing it.
	JobInterrupted JobState = "interrupted"
)

// Live reports whether the job is queued or running.
func (s JobState) Live() bool { return s == JobQueued || s == JobRunning }

// ErrJobState is returned when a state change does not apply to the job's
// current state (resuming a running run, stopping a finished one).
var ErrJobState = errors.New("not possible in the job's current state")

// TrainingRun is a training run of an organisation. Config is the request
// that started it (stage, model, hyper-parameters); Dir is its run folder.
type TrainingRun struct {
	ID     string          `json:"id"`
	OrgID  string          `json:"org_id"`
	Name   string          `json:"name"`
	Stage  string          `json:"stage"`
	Config json.RawMessage `json:"config"`
	State  JobState        `json:"state"`
	Dir    string          `json:"dir"`
	// Step is the last step the metrics report; Steps the run's total.
	Step       int        `json:"step"`
	Steps      int        `json:"steps"`
	Error      string     `json:"error,omitempty"`
	CreatedBy  string     `json:"created_by"`
	Creator    string     `json:"creator"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// operatorFilter limits org-wide operator data (runs, evaluations,
// settings) to the operators of the scope's organisation.
const operatorFilter = `t.org_id = ? AND ? = 'operator'`

func operatorArgs(sc Scope) []any { return []any{sc.OrgID, string(sc.Role)} }

const runColumns = `t.id, t.org_id, t.name, t.stage, t.config, t.state, t.dir, t.step, t.steps, t.error, t.created_by,
	COALESCE(u.username, ''), t.created_at, t.updated_at, t.started_at, t.finished_at`

func scanRun(row interface{ Scan(...any) error }) (*TrainingRun, error) {
	var r TrainingRun
	var config, created, updated, started, finished string
	err := row.Scan(&r.ID, &r.OrgID, &r.Name, &r.Stage, &config, &r.State, &r.Dir, &r.Step, &r.Steps, &r.Error, &r.CreatedBy,
		&r.Creator, &created, &updated, &started, &finished)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	r.Config = json.RawMessage(config)
	r.CreatedAt, r.UpdatedAt = parseStamp(created), parseStamp(updated)
	r.StartedAt, r.FinishedAt = optionalStamp(started), optionalStamp(finished)
	return &r, nil
}

func optionalStamp(v string) *time.Time {
	if v == "" {
		return nil
	}
	t := parseStamp(v)
	return &t
}

// NewTrainingRun is what CreateRun needs: the run folder is chosen by the
// caller from the ID it passes.
type NewTrainingRun struct {
	ID     string
	Name   string
	Stage  string
	Config json.RawMessage
	Dir    string
	Steps  int
}

// CreateRun records a queued run for the scope's organisation (operators
// only).
func (s *Store) CreateRun(ctx context.Context, sc Scope, nr NewTrainingRun) (*TrainingRun, error) {
	if sc.Role != RoleOperator {
		return nil, ErrNotFound
	}
	if nr.ID == "" || nr.Stage == "" || nr.Dir == "" || !json.Valid(nr.Config) {
		return nil, fmt.Errorf("training run: id, stage, run folder and a JSON config are required")
	}
	now := s.stamp()
	_, err := s.db.ExecContext(ctx, `INSERT INTO training_runs(id, org_id, name, stage, config, state, dir, steps, created_by,
		created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?)`,
		nr.ID, sc.OrgID, nr.Name, nr.Stage, string(nr.Config), nr.Dir, nr.Steps, sc.UserID, now, now)
	if err != nil {
		return nil, fmt.Errorf("training run: %w", err)
	}
	return s.Run(ctx, sc, nr.ID)
}

// Run reads one training run the scope sees.
func (s *Store) Run(ctx context.Context, sc Scope, id string) (*TrainingRun, error) {
	return scanRun(s.db.QueryRowContext(ctx, `SELECT `+runColumns+` FROM training_runs t LEFT JOIN users u ON u.id = t.created_by
		WHERE t.id = ? AND `+operatorFilter, append([]any{id}, operatorArgs(sc)...)...))
}

// Runs lists the organisation's training runs, newest first.
func (s *Store) Runs(ctx context.Context, sc Scope) ([]TrainingRun, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+runColumns+` FROM training_runs t LEFT JOIN users u ON u.id = t.created_by
		WHERE `+operatorFilter+` ORDER BY t.created_at DESC, t.id`, operatorArgs(sc)...)
	return collectRows(rows, err, scanRun)
}

// SetRunState moves a run from one of the states in from to the state to,
// recording msg as its error (cleared when it goes back to the queue).
// Entering running stamps the start; entering a final state stamps the
// end. A run in another state is left alone: ErrJobState.
func (s *Store) SetRunState(ctx context.Context, sc Scope, id string, from []JobState, to JobState, msg string) error {
	return s.setJobState(ctx, "training_runs", sc, id, from, to, msg)
}

// SetRunProgress records the last step a run reported and its total.
func (s *Store) SetRunProgress(ctx context.Context, sc Scope, id string, step, steps int) error {
	res, err := s.db.ExecContext(ctx, `UPDATE training_runs AS t SET step = ?, steps = ?, updated_at = ? WHERE t.id = ? AND `+operatorFilter,
		append([]any{step, steps, s.stamp(), id}, operatorArgs(sc)...)...)
	return affectedOne(res, err)
}

// setJobState is the compare-and-set of SetRunState and
// SetEvaluationState; table is one of the two job tables.
func (s *Store) setJobState(ctx context.Context, table string, sc Scope, id string, from []JobState, to JobState, msg string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := checkJobState(ctx, tx, table, sc, id, from); err != nil {
			return err
		}
		now := s.stamp()
		set := `state = ?, error = ?, updated_at = ?`
		args := []any{string(to), msg, now}
		switch {
		case to == JobQueued:
			set += `, started_at = '', finished_at = ''`
		case to == JobRunning:
			set += `, started_at = ?`
			args = append(args, now)
		default:
			set += `, finished_at = ?`
			args = append(args, now)
		}
		_, err := tx.ExecContext(ctx, `UPDATE `+table+` SET `+set+` WHERE id = ?`, append(args, id)...)
		return err
	})
}

// checkJobState fails unless the job is visible to sc and in one of the
// states in from.
func checkJobState(ctx context.Context, tx *sql.Tx, table string, sc Scope, id string, from []JobState) error {
	var cur JobState
	err := tx.QueryRowContext(ctx, `SELECT t.state FROM `+table+` t WHERE t.id = ? AND `+operatorFilter,
		append([]any{id}, operatorArgs(sc)...)...).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	if !slices.Contains(from, cur) {
		return fmt.Errorf("%w: it is %s", ErrJobState, cur)
	}
	return nil
}

// DeleteRun removes a run that is not queued or running (its folder is
// the caller's to remove).
func (s *Store) DeleteRun(ctx context.Context, sc Scope, id string) error {
	return s.deleteJob(ctx, "training_runs", sc, id)
}

// DeleteEvaluation removes an evaluation that is not queued or running,
// with its items.
func (s *Store) DeleteEvaluation(ctx context.Context, sc Scope, id string) error {
	return s.deleteJob(ctx, "evaluations", sc, id)
}

func (s *Store) deleteJob(ctx context.Context, table string, sc Scope, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := checkJobState(ctx, tx, table, sc, id, []JobState{JobStopped, JobFailed, JobDone, JobInterrupted}); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE id = ?`, id)
		return err
	})
}

// InterruptJobs marks every run and evaluation left queued or running by
// a process that ended without finishing them as interrupted, across all
// organisations: the console calls it once at start, before it runs jobs.
func (s *Store) InterruptJobs(ctx context.Context) (runs, evals int, err error) {
	now := s.stamp()
	count := func(table string) (int, error) {
		res, err := s.db.ExecContext(ctx, `UPDATE `+table+` SET state = 'interrupted', finished_at = ?, updated_at = ?,
			error = 'the console stopped while this was ' || state WHERE state IN ('queued', 'running')`, now, now)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		return int(n), err
	}
	if runs, err = count("training_runs"); err != nil {
		return 0, 0, fmt.Errorf("interrupt runs: %w", err)
	}
	if evals, err = count("evaluations"); err != nil {
		return 0, 0, fmt.Errorf("interrupt evaluations: %w", err)
	}
	return runs, evals, nil
}

func affectedOne(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// Evaluation is one run of an evaluation suite against a model. Report is
// the suite report (trainer/eval.SuiteReport) once the run ends.
type Evaluation struct {
	ID    string `json:"id"`
	OrgID string `json:"org_id"`
	Suite string `json:"suite"`
	N     int    `json:"n"`
	// ModelKind is serving, expert, run or url; ModelRef the run id or
	// URL it names; ModelName what was opened.
	ModelKind      string          `json:"model_kind"`
	ModelRef       string          `json:"model_ref,omitempty"`
	ModelName      string          `json:"model_name"`
	HarnessVersion string          `json:"harness_version"`
	State          JobState        `json:"state"`
	Done           int             `json:"done"`
	Total          int             `json:"total"`
	Score          *float64        `json:"score"`
	Report         json.RawMessage `json:"report,omitempty"`
	Error          string          `json:"error,omitempty"`
	CreatedBy      string          `json:"created_by"`
	Creator        string          `json:"creator"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
	StartedAt      *time.Time      `json:"started_at,omitempty"`
	FinishedAt     *time.Time      `json:"finished_at,omitempty"`
}

const evalColumns = `t.id, t.org_id, t.suite, t.n, t.model_kind, t.model_ref, t.model_name, t.harness_version, t.state, t.done,
	t.total, t.score, t.report, t.error, t.created_by, COALESCE(u.username, ''), t.created_at, t.updated_at, t.started_at, t.finished_at`

func scanEvaluation(row interface{ Scan(...any) error }) (*Evaluation, error) {
	var e Evaluation
	var score sql.NullFloat64
	var report, created, updated, started, finished string
	err := row.Scan(&e.ID, &e.OrgID, &e.Suite, &e.N, &e.ModelKind, &e.ModelRef, &e.ModelName, &e.HarnessVersion, &e.State,
		&e.Done, &e.Total, &score, &report, &e.Error, &e.CreatedBy, &e.Creator, &created, &updated, &started, &finished)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if score.Valid {
		e.Score = &score.Float64
	}
	e.Report = json.RawMessage(report)
	e.CreatedAt, e.UpdatedAt = parseStamp(created), parseStamp(updated)
	e.StartedAt, e.FinishedAt = optionalStamp(started), optionalStamp(finished)
	return &e, nil
}

// NewEvaluation is what CreateEvaluation needs.
type NewEvaluation struct {
	Suite          string
	N              int
	ModelKind      string
	ModelRef       string
	ModelName      string
	HarnessVersion string
}

// CreateEvaluation records a queued evaluation (operators only).
func (s *Store) CreateEvaluation(ctx context.Context, sc Scope, ne NewEvaluation) (*Evaluation, error) {
	if sc.Role != RoleOperator {
		return nil, ErrNotFound
	}
	if ne.Suite == "" || ne.N <= 0 || ne.ModelKind == "" {
		return nil, fmt.Errorf("evaluation: suite, a positive item count and a model are required")
	}
	id, now := NewID(), s.stamp()
	_, err := s.db.ExecContext(ctx, `INSERT INTO evaluations(id, org_id, suite, n, model_kind, model_ref, model_name,
		harness_version, state, total, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?)`,
		id, sc.OrgID, ne.Suite, ne.N, ne.ModelKind, ne.ModelRef, ne.ModelName, ne.HarnessVersion, ne.N, sc.UserID, now, now)
	if err != nil {
		return nil, fmt.Errorf("evaluation: %w", err)
	}
	return s.Evaluation(ctx, sc, id)
}

// Evaluation reads one evaluation the scope sees.
func (s *Store) Evaluation(ctx context.Context, sc Scope, id string) (*Evaluation, error) {
	return scanEvaluation(s.db.QueryRowContext(ctx, `SELECT `+evalColumns+` FROM evaluations t LEFT JOIN users u ON u.id = t.created_by
		WHERE t.id = ? AND `+operatorFilter, append([]any{id}, operatorArgs(sc)...)...))
}

// Evaluations lists the organisation's evaluations, oldest first (the
// history charts read them in order), of one suite when suite is set.
func (s *Store) Evaluations(ctx context.Context, sc Scope, suite string) ([]Evaluation, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+evalColumns+` FROM evaluations t LEFT JOIN users u ON u.id = t.created_by
		WHERE `+operatorFilter+` AND (? = '' OR t.suite = ?) ORDER BY t.created_at, t.id`,
		append(operatorArgs(sc), suite, suite)...)
	return collectRows(rows, err, scanEvaluation)
}

// SetEvaluationState is SetRunState for evaluations.
func (s *Store) SetEvaluationState(ctx context.Context, sc Scope, id string, from []JobState, to JobState, msg string) error {
	return s.setJobState(ctx, "evaluations", sc, id, from, to, msg)
}

// SetEvaluationProgress records how many items have finished.
func (s *Store) SetEvaluationProgress(ctx context.Context, sc Scope, id string, done, total int) error {
	res, err := s.db.ExecContext(ctx, `UPDATE evaluations AS t SET done = ?, total = ?, updated_at = ? WHERE t.id = ? AND `+operatorFilter,
		append([]any{done, total, s.stamp(), id}, operatorArgs(sc)...)...)
	return affectedOne(res, err)
}

// EvalItem is one graded item of an evaluation. Grade is the grader's
// record (trainer/liveroom.Grade: scores and deductions).
type EvalItem struct {
	Index          int             `json:"index"`
	ItemID         string          `json:"item_id"`
	Category       string          `json:"category"`
	Question       string          `json:"question"`
	Reply          string          `json:"reply"`
	Score          float64         `json:"score"`
	Grade          json.RawMessage `json:"grade"`
	Outcome        string          `json:"outcome"`
	Error          string          `json:"error,omitempty"`
	TookMS         float64         `json:"took_ms"`
	HarnessVersion string          `json:"harness_version"`
}

// FinishEvaluation stores an evaluation's report, score and items and
// moves it from running to state, in one transaction.
func (s *Store) FinishEvaluation(ctx context.Context, sc Scope, id string, state JobState, score *float64, report json.RawMessage,
	items []EvalItem, msg string) error {
	if !json.Valid(report) {
		return fmt.Errorf("evaluation %s: the report is not valid JSON", id)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := checkJobState(ctx, tx, "evaluations", sc, id, []JobState{JobRunning}); err != nil {
			return err
		}
		var sv any
		if score != nil {
			sv = *score
		}
		now := s.stamp()
		if _, err := tx.ExecContext(ctx, `UPDATE evaluations SET state = ?, score = ?, report = ?, error = ?, done = ?,
			finished_at = ?, updated_at = ? WHERE id = ?`, string(state), sv, string(report), msg, len(items), now, now, id); err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO eval_items(eval_id, idx, item_id, category, question, reply, score, grade,
			outcome, error, took_ms, harness_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, it := range items {
			if !json.Valid(it.Grade) {
				return fmt.Errorf("evaluation %s: item %s: the grade is not valid JSON", id, it.ItemID)
			}
			if _, err := stmt.ExecContext(ctx, id, it.Index, it.ItemID, it.Category, it.Question, it.Reply, it.Score,
				string(it.Grade), it.Outcome, it.Error, it.TookMS, it.HarnessVersion); err != nil {
				return fmt.Errorf("evaluation %s: item %s: %w", id, it.ItemID, err)
			}
		}
		return nil
	})
}

const evalItemColumns = `i.idx, i.item_id, i.category, i.question, i.reply, i.score, i.grade, i.outcome, i.error, i.took_ms, i.harness_version`

func scanEvalItem(row interface{ Scan(...any) error }) (*EvalItem, error) {
	var it EvalItem
	var grade string
	err := row.Scan(&it.Index, &it.ItemID, &it.Category, &it.Question, &it.Reply, &it.Score, &grade, &it.Outcome, &it.Error,
		&it.TookMS, &it.HarnessVersion)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	it.Grade = json.RawMessage(grade)
	return &it, nil
}

// EvalItems lists an evaluation's items in suite order.
func (s *Store) EvalItems(ctx context.Context, sc Scope, evalID string) ([]EvalItem, error) {
	if _, err := s.Evaluation(ctx, sc, evalID); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+evalItemColumns+` FROM eval_items i WHERE i.eval_id = ? ORDER BY i.idx`, evalID)
	return collectRows(rows, err, scanEvalItem)
}

// EvalItem reads one item of an evaluation the scope sees.
func (s *Store) EvalItem(ctx context.Context, sc Scope, evalID, itemID string) (*EvalItem, error) {
	return scanEvalItem(s.db.QueryRowContext(ctx, `SELECT `+evalItemColumns+` FROM eval_items i
		JOIN evaluations t ON t.id = i.eval_id WHERE i.eval_id = ? AND i.item_id = ? AND `+operatorFilter,
		append([]any{evalID, itemID}, operatorArgs(sc)...)...))
}

// Setting is a named per-organisation value with who changed it last.
type Setting struct {
	Name      string    `json:"name"`
	Value     string    `json:"value"`
	UpdatedBy string    `json:"updated_by"`
	UpdatedAt time.Time `json:"updated_at"`
}

// OrgSetting reads a setting of an organisation; ErrNotFound when unset.
// It takes the organisation, not a scope: the live runtime reads settings
// such as the serving model for every role's sessions.
func (s *Store) OrgSetting(ctx context.Context, orgID, name string) (*Setting, error) {
	var st Setting
	var updated string
	err := s.db.QueryRowContext(ctx, `SELECT name, value, updated_by, updated_at FROM org_settings WHERE org_id = ? AND name = ?`,
		orgID, name).Scan(&st.Name, &st.Value, &st.UpdatedBy, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	st.UpdatedAt = parseStamp(updated)
	return &st, nil
}

// SetOrgSetting writes a setting of the scope's organisation (operators
// only); an empty value removes it.
func (s *Store) SetOrgSetting(ctx context.Context, sc Scope, name, value string) error {
	if sc.Role != RoleOperator {
		return ErrNotFound
	}
	if name == "" {
		return fmt.Errorf("setting: name is required")
	}
	if value == "" {
		_, err := s.db.ExecContext(ctx, `DELETE FROM org_settings WHERE org_id = ? AND name = ?`, sc.OrgID, name)
		return err
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO org_settings(org_id, name, value, updated_by, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT(org_id, name) DO UPDATE SET value = excluded.value, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		sc.OrgID, name, value, sc.UserID, s.stamp())
	return err
}
