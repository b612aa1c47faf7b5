package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/plugins"
)

// PluginSet serves a session's tools, hooks and skills from loaded WASM
// plugins, by plugin name, with the stream's host environment. Plugins
// can be replaced while sessions run; a call uses the version it found.
type PluginSet struct {
	env plugins.HostEnv
	mu  sync.RWMutex
	by  map[string]*plugins.Plugin
}

// NewPluginSet serves the given plugins with env as their host side.
func NewPluginSet(env plugins.HostEnv, ps ...*plugins.Plugin) *PluginSet {
	s := &PluginSet{env: env, by: map[string]*plugins.Plugin{}}
	for _, p := range ps {
		s.by[p.Name()] = p
	}
	return s
}

// Put installs or replaces a plugin (an upgrade or a rollback).
func (s *PluginSet) Put(p *plugins.Plugin) {
	s.mu.Lock()
	s.by[p.Name()] = p
	s.mu.Unlock()
}

func (s *PluginSet) get(name string) (*plugins.Plugin, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.by[name]
	if !ok {
		return nil, fmt.Errorf("plugin %q is not installed", name)
	}
	return p, nil
}

// Tool runs a tool export.
func (s *PluginSet) Tool(ctx context.Context, plugin, export string, args json.RawMessage) (json.RawMessage, error) {
	p, err := s.get(plugin)
	if err != nil {
		return nil, err
	}
	return p.Tool(ctx, s.env, export, args)
}

// Hook runs a hook export.
func (s *PluginSet) Hook(ctx context.Context, plugin, export string, input json.RawMessage) (harness.HookDecision, error) {
	p, err := s.get(plugin)
	if err != nil {
		return harness.HookDecision{}, err
	}
	return p.Hook(ctx, s.env, export, input)
}

// Skill runs a skill export.
func (s *PluginSet) Skill(ctx context.Context, plugin, export string, input json.RawMessage) (string, error) {
	p, err := s.get(plugin)
	if err != nil {
		return "", err
	}
	return p.Skill(ctx, s.env, export, input)
}
