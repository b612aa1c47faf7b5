package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/model/engine"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/nn/runfolder"
)

// servingSetting names the organisation setting that holds the checkpoint
// folder its streams are served from.
const servingSetting = "serving_model"

// promotedFile describes a promoted checkpoint inside its folder.
const promotedFile = "promoted.json"

// promotion is what promoted.json records.
type promotion struct {
	RunID      string    `json:"run_id"`
	RunName    string    `json:"run_name"`
	Stage      string    `json:"stage"`
	Step       int       `json:"step"`
	PromotedBy string    `json:"promoted_by"`
	PromotedAt time.Time `json:"promoted_at"`
}

// servingModel is the model spec an organisation's streams are served
// with: the checkpoint folder an operator promoted, or Config.ModelName
// when none was. The live and release areas open it.
func (s *Server) servingModel(ctx context.Context, orgID string) (spec string) {
	st, err := s.store.OrgSetting(ctx, orgID, servingSetting)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.Error("reading the serving model", "org", orgID, "err", err)
		}
		return s.cfg.ModelName
	}
	return st.Value
}

// servingView is the serving model as the console shows it.
type servingView struct {
	Spec string `json:"spec"`
	// Default is true when nothing was promoted: Spec is the console's
	// configured model.
	Default   bool       `json:"default"`
	Promotion *promotion `json:"promotion,omitempty"`
	// Server is the model server the streams are served from, when Spec
	// names one (serving_remote.go); its API key is never shown.
	Server *serverView `json:"server,omitempty"`
}

func (s *Server) servingView(ctx context.Context, orgID string) servingView {
	st, err := s.store.OrgSetting(ctx, orgID, servingSetting)
	if err != nil {
		return servingView{Spec: s.cfg.ModelName, Default: true}
	}
	v := servingView{Spec: st.Value}
	if sv, ok, err := parseServedServer(st.Value); ok {
		if err != nil {
			s.log.Error("reading the serving model", "org", orgID, "err", err)
			return servingView{Spec: s.cfg.ModelName, Default: true}
		}
		v.Spec, v.Server = sv.name(), sv.view()
		return v
	}
	var p promotion
	if runfolder.ReadJSON(filepath.Join(st.Value, promotedFile), &p) == nil {
		v.Promotion = &p
	}
	return v
}

// servedModels keeps one engine per promoted checkpoint folder: every live
// session of every organisation serving it shares the engine, which
// batches their generations.
type servedModels struct {
	mu      sync.Mutex
	engines map[string]*engine.Engine
	// metrics exports each engine's counters on /metrics (nil without).
	metrics *runtime.EngineMetrics
	// remote holds the clients of model servers (serving_remote.go).
	remote remoteClients
}

func (m *servedModels) get(spec string) (*engine.Engine, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if eng, ok := m.engines[spec]; ok {
		return eng, nil
	}
	eng, err := engine.Load(spec, engine.Options{})
	if err != nil {
		return nil, fmt.Errorf("serving model %s: %w", spec, err)
	}
	if m.engines == nil {
		m.engines = map[string]*engine.Engine{}
	}
	m.engines[spec] = eng
	m.metrics.Watch(spec, eng)
	return eng, nil
}

func (m *servedModels) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for spec, eng := range m.engines {
		m.metrics.Forget(spec)
		eng.Close()
		delete(m.engines, spec)
	}
}

// liveModel is the model an organisation's new live sessions answer with,
// and its name: the model server or promoted checkpoint it set, or
// Config.Model.
func (s *Server) liveModel(ctx context.Context, orgID string) (runtime.Model, string, error) {
	if st, err := s.store.OrgSetting(ctx, orgID, servingSetting); err == nil {
		if sv, ok, err := parseServedServer(st.Value); ok {
			if err != nil {
				return nil, "", err
			}
			return s.serverModel(st.Value, sv)
		}
	}
	v := s.servingView(ctx, orgID)
	if v.Default || v.Spec == "" {
		if s.cfg.Model == nil {
			return nil, "", errNoModel
		}
		return s.cfg.Model, s.configuredModelName(), nil
	}
	return s.servedModel(v.Spec)
}

// servedModel is a checkpoint folder as a live session's model: its
// shared engine (servedModels), with tool calls constrained.
func (s *Server) servedModel(spec string) (runtime.Model, string, error) {
	eng, err := s.served.get(spec)
	if err != nil {
		return nil, "", err
	}
	return runtime.LocalModel{Engine: eng, Constrain: true}, spec, nil
}

// checkpointModel is the model a live session of an organisation answers
// with when an experiment's arm names a checkpoint: "" is the serving model
// (liveModel); otherwise the checkpoint is the console's configured model
// by its name, or a checkpoint folder the organisation has promoted (its
// full path or its folder name under the data folder's models/), loaded
// through the same shared engines as the serving checkpoint. A folder
// another organisation promoted is refused as an unknown one.
func (s *Server) checkpointModel(ctx context.Context, orgID, checkpoint string) (runtime.Model, string, error) {
	if checkpoint == "" {
		return s.liveModel(ctx, orgID)
	}
	if s.cfg.Model != nil && checkpoint == s.configuredModelName() {
		return s.cfg.Model, checkpoint, nil
	}
	folder, err := s.promotedFolder(ctx, orgID, checkpoint)
	if err != nil {
		return nil, "", err
	}
	return s.servedModel(folder)
}

// promotedFolder resolves a checkpoint an experiment names to a folder
// the organisation promoted: the organisation's serving checkpoint, or a
// folder under models/ whose promotion record names a training run of the
// organisation. A model server is no checkpoint: naming one (its URL, or
// the name the organisation's server is shown by) is refused as such.
func (s *Server) promotedFolder(ctx context.Context, orgID, checkpoint string) (string, error) {
	v := s.servingView(ctx, orgID)
	switch {
	case v.Server != nil && checkpoint == v.Spec:
		return "", fmt.Errorf("checkpoint %q is the organisation's model server, not a checkpoint: name no checkpoint to use the serving model", checkpoint)
	case strings.HasPrefix(checkpoint, "http://") || strings.HasPrefix(checkpoint, "https://"):
		return "", fmt.Errorf("checkpoint %q is a model server's URL, not a checkpoint: set the server as the serving model on the Settings page", checkpoint)
	case v.Server == nil && !v.Default && v.Spec != "" && (checkpoint == v.Spec || checkpoint == filepath.Base(v.Spec)):
		return v.Spec, nil
	}
	models, err := s.dataPath("models")
	if err != nil {
		return "", err
	}
	name := checkpoint
	if filepath.IsAbs(checkpoint) {
		if filepath.Dir(filepath.Clean(checkpoint)) != filepath.Clean(models) {
			return "", fmt.Errorf("checkpoint %q is not a promoted checkpoint (a folder of %s)", checkpoint, models)
		}
		name = filepath.Base(checkpoint)
	}
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name {
		return "", fmt.Errorf("checkpoint %q is not a promoted checkpoint's folder name", checkpoint)
	}
	folder := filepath.Join(models, name)
	var p promotion
	if err := runfolder.ReadJSON(filepath.Join(folder, promotedFile), &p); err != nil {
		return "", fmt.Errorf("checkpoint %q: no promoted checkpoint of that name: promote a run on the Training page first", checkpoint)
	}
	if _, err := s.store.Run(ctx, systemScope(orgID), p.RunID); err != nil {
		return "", fmt.Errorf("checkpoint %q: no promoted checkpoint of that name: promote a run on the Training page first", checkpoint)
	}
	return folder, nil
}

// liveModelName is how turns and the live view name an organisation's
// serving model.
func (s *Server) liveModelName(ctx context.Context, orgID string) string {
	if v := s.servingView(ctx, orgID); !v.Default && v.Spec != "" {
		return v.Spec
	}
	return s.configuredModelName()
}

// configuredModelName names Config.Model.
func (s *Server) configuredModelName() string {
	if s.cfg.ModelName != "" || s.cfg.Model == nil {
		return s.cfg.ModelName
	}
	return fmt.Sprintf("%T", s.cfg.Model)
}

func (t *trainingRuns) serving(c *fiber.Ctx) error {
	return c.JSON(t.s.servingView(c.UserContext(), scopeOf(c).OrgID))
}

// resetServing goes back to the console's configured model.
func (t *trainingRuns) resetServing(c *fiber.Ctx) error {
	sc := scopeOf(c)
	if err := t.s.store.SetOrgSetting(c.UserContext(), sc, servingSetting, ""); err != nil {
		return storeError(err, "setting")
	}
	return c.JSON(t.s.servingView(c.UserContext(), sc.OrgID))
}

// promote copies the run's last checkpoint (without optimizer state) to
// a folder of its own under models/, named by run and step, so that the
// run can go on without changing what is served, and makes it the
// organisation's serving model.
func (t *trainingRuns) promote(c *fiber.Ctx) error {
	ctx, sc := c.UserContext(), scopeOf(c)
	r, err := t.s.store.Run(ctx, sc, c.Params("id"))
	if err != nil {
		return storeError(err, "training run")
	}
	if _, err := runfolder.ReadState(r.Dir); err != nil {
		return fiber.NewError(fiber.StatusConflict, fmt.Sprintf("run %q has no checkpoint yet", r.Name))
	}
	models, err := t.s.dataPath("models")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(models, 0o700); err != nil {
		return fmt.Errorf("models folder: %w", err)
	}
	tmp, err := os.MkdirTemp(models, ".promote-")
	if err != nil {
		return fmt.Errorf("models folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	step, err := copyCheckpoint(filepath.Join(r.Dir, runfolder.CheckpointDir), filepath.Join(tmp, "model"))
	if err != nil {
		return fiber.NewError(fiber.StatusConflict, "the checkpoint changed while it was copied (the run saved a new one): promote again")
	}
	p := promotion{RunID: r.ID, RunName: r.Name, Stage: r.Stage, Step: step, PromotedBy: userOf(c).Username, PromotedAt: time.Now().UTC()}
	if err := runfolder.WriteJSON(filepath.Join(tmp, "model", promotedFile), p); err != nil {
		return err
	}
	dst := filepath.Join(models, fmt.Sprintf("%s-step%d", r.ID, step))
	if err := os.Rename(filepath.Join(tmp, "model"), dst); err != nil {
		// Promoted before: the folder of that step is already there and
		// holds the same checkpoint.
		if _, statErr := os.Stat(filepath.Join(dst, runfolder.StateFile)); statErr != nil {
			return fmt.Errorf("promote: %w", err)
		}
	}
	if err := t.s.store.SetOrgSetting(ctx, sc, servingSetting, dst); err != nil {
		return storeError(err, "setting")
	}
	return c.JSON(t.s.servingView(ctx, sc.OrgID))
}

// copyCheckpoint copies a checkpoint folder without its optimizer state
// and returns the step it holds. The copy is written aside and renamed
// into place; it fails if the trainer replaced the checkpoint meanwhile.
func copyCheckpoint(src, dst string) (step int, err error) {
	var before runfolder.State
	if err := runfolder.ReadJSON(filepath.Join(src, runfolder.StateFile), &before); err != nil {
		return 0, err
	}
	tmp := dst + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return 0, err
	}
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil || rel == "." {
			return err
		}
		target := filepath.Join(tmp, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o700)
		case rel == runfolder.OptimizerFile || !d.Type().IsRegular():
			return nil
		}
		return copyFile(path, target)
	})
	var after runfolder.State
	if err == nil {
		err = runfolder.ReadJSON(filepath.Join(tmp, runfolder.StateFile), &after)
	}
	if err == nil && after.Step != before.Step {
		err = fmt.Errorf("checkpoint moved from step %d to %d during the copy", before.Step, after.Step)
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return 0, fmt.Errorf("copy checkpoint %s: %w", src, err)
	}
	return after.Step, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
