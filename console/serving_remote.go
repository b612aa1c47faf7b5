package console

import (
	"cmp"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/remote"
	"github.com/livehat/livehat/runtime"
)

// A serving setting that names a model server instead of a checkpoint
// folder holds serverPrefix and the server's JSON (servedServer).
const serverPrefix = "server:"

// streamServingSetting names the setting that serves one stream from its
// own model (a server), overriding the organisation's.
func streamServingSetting(streamID string) string { return servingSetting + ":stream:" + streamID }

// servingKeyFile is the data folder's file holding the key that encrypts
// model servers' API keys in the store, so a database dump alone does not
// reveal them.
const servingKeyFile = "serving.key"

// servedServer is an OpenAI-compatible server a stream is served from, as
// stored: the API key encrypted, or named as an environment variable.
type servedServer struct {
	URL   string `json:"url"`
	Model string `json:"model"`
	// KeySealed is the API key, AES-GCM sealed with the data folder's
	// serving.key, base64.
	KeySealed string `json:"key_sealed,omitempty"`
	// KeyEnv names an environment variable of the console's process that
	// holds the key instead.
	KeyEnv             string  `json:"key_env,omitempty"`
	TimeoutSeconds     float64 `json:"timeout_s,omitempty"`
	IdleTimeoutSeconds float64 `json:"idle_timeout_s,omitempty"`
	Concurrency        int     `json:"concurrency,omitempty"`
	Retries            int     `json:"retries,omitempty"`
}

// serverView is a model server as the API shows it: never the key.
type serverView struct {
	URL                string  `json:"url"`
	Model              string  `json:"model"`
	HasAPIKey          bool    `json:"has_api_key"`
	APIKeyEnv          string  `json:"api_key_env,omitempty"`
	TimeoutSeconds     float64 `json:"timeout_s,omitempty"`
	IdleTimeoutSeconds float64 `json:"idle_timeout_s,omitempty"`
	Concurrency        int     `json:"concurrency,omitempty"`
	Retries            int     `json:"retries,omitempty"`
}

func (sv servedServer) view() *serverView {
	return &serverView{URL: sv.URL, Model: sv.Model, HasAPIKey: sv.KeySealed != "", APIKeyEnv: sv.KeyEnv,
		TimeoutSeconds: sv.TimeoutSeconds, IdleTimeoutSeconds: sv.IdleTimeoutSeconds, Concurrency: sv.Concurrency, Retries: sv.Retries}
}

// name is how turns, the live view and /metrics name the server: the model
// at the URL's host, never the key.
func (sv servedServer) name() string {
	host := sv.URL
	if u, err := url.Parse(sv.URL); err == nil && u.Host != "" {
		host = u.Host
	}
	return sv.Model + " at " + host
}

// parseServedServer reads a setting's value; ok is false for a checkpoint
// folder.
func parseServedServer(value string) (sv servedServer, ok bool, err error) {
	rest, ok := strings.CutPrefix(value, serverPrefix)
	if !ok {
		return servedServer{}, false, nil
	}
	if err := json.Unmarshal([]byte(rest), &sv); err != nil {
		return servedServer{}, true, fmt.Errorf("stored model server: %w", err)
	}
	return sv, true, nil
}

// serverRequest is the body of PUT /api/serving-model and of a stream's.
type serverRequest struct {
	Server *struct {
		URL   string `json:"url"`
		Model string `json:"model"`
		// APIKey is sealed before it is stored; null keeps the stored one,
		// "" removes it.
		APIKey             *string `json:"api_key"`
		APIKeyEnv          string  `json:"api_key_env"`
		TimeoutSeconds     float64 `json:"timeout_s"`
		IdleTimeoutSeconds float64 `json:"idle_timeout_s"`
		Concurrency        int     `json:"concurrency"`
		Retries            int     `json:"retries"`
	} `json:"server"`
}

// serverFromRequest validates a request against the setting it replaces
// (whose sealed key a request without api_key keeps) and returns what to
// store, with the key sealed.
func (s *Server) serverFromRequest(body []byte, previous string) (servedServer, error) {
	var req serverRequest
	if err := decodeStrict(body, &req); err != nil {
		return servedServer{}, fmt.Errorf("body: %w", err)
	}
	r := req.Server
	if r == nil {
		return servedServer{}, errors.New(`body: want {"server": {"url": …, "model": …}}`)
	}
	sv := servedServer{URL: strings.TrimSpace(r.URL), Model: strings.TrimSpace(r.Model), KeyEnv: strings.TrimSpace(r.APIKeyEnv),
		TimeoutSeconds: r.TimeoutSeconds, IdleTimeoutSeconds: r.IdleTimeoutSeconds, Concurrency: r.Concurrency, Retries: r.Retries}
	switch {
	case sv.Model == "":
		return servedServer{}, errors.New("server.model: name the model the server serves")
	case r.TimeoutSeconds < 0 || r.IdleTimeoutSeconds < 0 || r.TimeoutSeconds > 600 || r.IdleTimeoutSeconds > 600:
		return servedServer{}, errors.New("server.timeout_s and idle_timeout_s: want 0 (the default, 60 s) to 600 seconds")
	case r.Concurrency < 0 || r.Concurrency > 4096:
		return servedServer{}, errors.New("server.concurrency: want 0 (no bound) to 4096")
	case r.Retries < -1 || r.Retries > 10:
		return servedServer{}, errors.New("server.retries: want -1 (never), 0 (the default, 2) to 10")
	case r.APIKey != nil && *r.APIKey != "" && sv.KeyEnv != "":
		return servedServer{}, errors.New("server: give api_key or api_key_env, not both")
	}
	if _, err := remote.New(remote.Config{BaseURL: sv.URL, Model: sv.Model}); err != nil {
		return servedServer{}, fmt.Errorf("server.url: %w", err)
	}
	switch {
	case r.APIKey == nil && sv.KeyEnv == "":
		if old, ok, _ := parseServedServer(previous); ok {
			sv.KeySealed = old.KeySealed
		}
	case r.APIKey != nil && *r.APIKey != "":
		sealed, err := s.sealServingKey(*r.APIKey)
		if err != nil {
			return servedServer{}, err
		}
		sv.KeySealed = sealed
	}
	return sv, nil
}

// servingCipher is the AES-GCM cipher of the data folder's serving.key,
// created (0600) on first use.
func (s *Server) servingCipher() (cipher.AEAD, error) {
	path, err := s.dataPath(servingKeyFile)
	if err != nil {
		return nil, err
	}
	key, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(s.cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("serving key: %w", err)
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			_, err = f.Write(key)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if errors.Is(err, os.ErrExist) {
			key, err = os.ReadFile(path) // written by a concurrent request
		}
		if err != nil {
			return nil, fmt.Errorf("serving key %s: %w", path, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("serving key %s: %w", path, err)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("serving key %s: %d bytes, want 32", path, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func (s *Server) sealServingKey(apiKey string) (string, error) {
	aead, err := s.servingCipher()
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(aead.Seal(nonce, nonce, []byte(apiKey), nil)), nil
}

func (s *Server) openServingKey(sealed string) (string, error) {
	aead, err := s.servingCipher()
	if err != nil {
		return "", err
	}
	data, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(data) < aead.NonceSize() {
		return "", errors.New("the stored API key is damaged: set it again")
	}
	plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], nil)
	if err != nil {
		return "", fmt.Errorf("the stored API key does not open with %s (was the data folder's key replaced?): set it again", servingKeyFile)
	}
	return string(plain), nil
}

// remoteClients keeps one client per stored server setting, so the
// sessions served from a server share its concurrency limit and its
// memory of tool-call ids.
type remoteClients struct {
	mu      sync.Mutex
	clients map[string]*remote.Client // by the setting's value
	metrics *runtime.RemoteMetrics
}

// serverModel is a stored server as a live session's model.
func (s *Server) serverModel(value string, sv servedServer) (runtime.Model, string, error) {
	rc := &s.served.remote
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if c, ok := rc.clients[value]; ok {
		return runtime.RemoteModel{Client: c}, sv.name(), nil
	}
	cfg, err := s.remoteConfig(sv)
	if err != nil {
		return nil, "", err
	}
	if rc.metrics == nil && s.cfg.Metrics != nil {
		m, err := runtime.NewRemoteMetrics(s.cfg.Metrics)
		if err != nil {
			return nil, "", err
		}
		rc.metrics = m
	}
	cfg.OnAttempt = rc.metrics.Observer(sv.name())
	c, err := remote.New(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("model server %s: %w", sv.name(), err)
	}
	if rc.clients == nil {
		rc.clients = map[string]*remote.Client{}
	}
	rc.clients[value] = c
	return runtime.RemoteModel{Client: c}, sv.name(), nil
}

// remoteConfig is a stored server's client configuration, its API key
// opened.
func (s *Server) remoteConfig(sv servedServer) (remote.Config, error) {
	cfg := remote.Config{BaseURL: sv.URL, Model: sv.Model, Timeout: seconds(sv.TimeoutSeconds),
		StreamIdleTimeout: seconds(sv.IdleTimeoutSeconds), MaxConcurrent: sv.Concurrency, MaxRetries: sv.Retries}
	switch {
	case sv.KeyEnv != "":
		cfg.APIKey = os.Getenv(sv.KeyEnv)
		if cfg.APIKey == "" {
			return remote.Config{}, fmt.Errorf("model server %s: the environment variable %s that holds its API key is not set", sv.name(), sv.KeyEnv)
		}
	case sv.KeySealed != "":
		key, err := s.openServingKey(sv.KeySealed)
		if err != nil {
			return remote.Config{}, fmt.Errorf("model server %s: %w", sv.name(), err)
		}
		cfg.APIKey = key
	}
	return cfg, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// servingTestTimeout bounds a connection test: an operator waits for it.
const servingTestTimeout = 15 * time.Second

// servingTest is what a connection test answers.
type servingTest struct {
	OK     bool   `json:"ok"`
	Server string `json:"server"`
	// Model is the model the server says answered.
	Model  string      `json:"model,omitempty"`
	TookMS int64       `json:"took_ms"`
	Kind   remote.Kind `json:"kind,omitempty"`
	Error  string      `json:"error,omitempty"`
}

// testServing is POST /api/serving-model/test and
// /api/serving-model/streams/:stream/test: it asks the server a body
// describes (as PUT takes it; without api_key, with the key stored in the
// setting it would replace) for one token, once, streamed as live
// sessions ask, and says how that went.
// Nothing is stored; a server that fails answers 200 with ok false and
// the failure's kind, since the test itself worked.
func (t *trainingRuns) testServing(c *fiber.Ctx) error {
	ctx, sc := c.UserContext(), scopeOf(c)
	setting := servingSetting
	if c.Params("stream") != "" {
		id, err := t.streamOf(c)
		if err != nil {
			return err
		}
		setting = streamServingSetting(id)
	}
	previous := ""
	if st, err := t.s.store.OrgSetting(ctx, sc.OrgID, setting); err == nil {
		previous = st.Value
	}
	sv, err := t.s.serverFromRequest(c.Body(), previous)
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, err.Error())
	}
	cfg, err := t.s.remoteConfig(sv)
	if err != nil {
		return fiber.NewError(fiber.StatusUnprocessableEntity, err.Error())
	}
	cfg.MaxRetries = -1
	cfg.Timeout = min(cmp.Or(cfg.Timeout, servingTestTimeout), servingTestTimeout)
	cfg.StreamIdleTimeout = min(cmp.Or(cfg.StreamIdleTimeout, servingTestTimeout), servingTestTimeout)
	client, err := remote.New(cfg)
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, "server.url: "+err.Error())
	}
	start := time.Now()
	model, err := askOneToken(ctx, client)
	res := servingTest{Server: sv.name(), Model: model, TookMS: time.Since(start).Milliseconds()}
	if err != nil {
		res.Kind, res.Error = remote.ErrorKind(err), err.Error()
	} else {
		res.OK = true
	}
	return c.JSON(res)
}

// askOneToken streams a one-token answer and returns the model the server
// says gave it.
func askOneToken(ctx context.Context, client *remote.Client) (string, error) {
	zero := 0.0
	s, err := client.Stream(ctx, remote.Request{Messages: []chat.Message{{Role: chat.RoleUser, Content: "Say OK."}}, MaxTokens: 1, Temperature: &zero})
	if err != nil {
		return "", err
	}
	defer s.Close()
	for {
		if _, err := s.Recv(); err == io.EOF {
			break
		} else if err != nil {
			return "", err
		}
	}
	resp, err := s.Response()
	if err != nil {
		return "", err
	}
	return resp.Model, nil
}

// setServing is PUT /api/serving-model: the organisation's streams are
// served from a model server.
func (t *trainingRuns) setServing(c *fiber.Ctx) error {
	ctx, sc := c.UserContext(), scopeOf(c)
	previous := ""
	if st, err := t.s.store.OrgSetting(ctx, sc.OrgID, servingSetting); err == nil {
		previous = st.Value
	}
	sv, err := t.s.serverFromRequest(c.Body(), previous)
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, err.Error())
	}
	b, _ := json.Marshal(sv)
	if err := t.s.store.SetOrgSetting(ctx, sc, servingSetting, serverPrefix+string(b)); err != nil {
		return storeError(err, "setting")
	}
	return c.JSON(t.s.servingView(ctx, sc.OrgID))
}

// streamServingView is a stream's own serving model, if it has one.
type streamServingView struct {
	Stream string      `json:"stream"`
	Own    bool        `json:"own"`
	Spec   string      `json:"spec"`
	Server *serverView `json:"server,omitempty"`
}

func (s *Server) streamServingView(ctx context.Context, orgID, streamID string) streamServingView {
	v := streamServingView{Stream: streamID}
	st, err := s.store.OrgSetting(ctx, orgID, streamServingSetting(streamID))
	if err == nil {
		if sv, ok, err := parseServedServer(st.Value); ok && err == nil {
			v.Own, v.Spec, v.Server = true, sv.name(), sv.view()
			return v
		}
	}
	v.Spec = s.liveModelName(ctx, orgID)
	return v
}

// streamOf checks that the stream is one the caller may see.
func (t *trainingRuns) streamOf(c *fiber.Ctx) (string, error) {
	st, err := t.s.store.Stream(c.UserContext(), scopeOf(c), c.Params("stream"))
	if err != nil {
		return "", storeError(err, "stream")
	}
	return st.ID, nil
}

// streamServing is GET /api/serving-model/streams/:stream.
func (t *trainingRuns) streamServing(c *fiber.Ctx) error {
	id, err := t.streamOf(c)
	if err != nil {
		return err
	}
	return c.JSON(t.s.streamServingView(c.UserContext(), scopeOf(c).OrgID, id))
}

// setStreamServing is PUT /api/serving-model/streams/:stream: the stream is
// served from its own model server.
func (t *trainingRuns) setStreamServing(c *fiber.Ctx) error {
	id, err := t.streamOf(c)
	if err != nil {
		return err
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	previous := ""
	if st, err := t.s.store.OrgSetting(ctx, sc.OrgID, streamServingSetting(id)); err == nil {
		previous = st.Value
	}
	sv, err := t.s.serverFromRequest(c.Body(), previous)
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, err.Error())
	}
	b, _ := json.Marshal(sv)
	if err := t.s.store.SetOrgSetting(ctx, sc, streamServingSetting(id), serverPrefix+string(b)); err != nil {
		return storeError(err, "setting")
	}
	return c.JSON(t.s.streamServingView(ctx, sc.OrgID, id))
}

// resetStreamServing is DELETE /api/serving-model/streams/:stream: the
// stream goes back to the organisation's serving model.
func (t *trainingRuns) resetStreamServing(c *fiber.Ctx) error {
	id, err := t.streamOf(c)
	if err != nil {
		return err
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	if err := t.s.store.SetOrgSetting(ctx, sc, streamServingSetting(id), ""); err != nil {
		return storeError(err, "setting")
	}
	return c.JSON(t.s.streamServingView(ctx, sc.OrgID, id))
}

// streamModel is the model a stream's new live sessions answer with: its
// own server when it has one, else the organisation's serving model
// (checkpointModel with the experiment arm's checkpoint, "" for none).
func (s *Server) streamModel(ctx context.Context, orgID, streamID, checkpoint string) (runtime.Model, string, error) {
	if checkpoint == "" {
		st, err := s.store.OrgSetting(ctx, orgID, streamServingSetting(streamID))
		switch {
		case err == nil:
			sv, _, err := parseServedServer(st.Value)
			if err != nil {
				return nil, "", err
			}
			return s.serverModel(st.Value, sv)
		case !errors.Is(err, store.ErrNotFound):
			return nil, "", err
		}
	}
	return s.checkpointModel(ctx, orgID, checkpoint)
}
