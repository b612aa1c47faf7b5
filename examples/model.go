package examples

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// Model is the bundled compact model in the Hugging Face checkpoint
// layout ("model/config.json", "model/tokenizer.json" and
// "model/model.safetensors" in bfloat16): the model `go run .`, `livehat
// eval` and `livehat bench` answer with unless told otherwise. It is
// re-created by `livehat train --recipe bundled` (trainer/REPRODUCTION.md).
//
//go:embed model
var Model embed.FS

// ModelName is how flags name the bundled model.
const ModelName = "bundled"

// ModelDescription is how the console and reports name the bundled model.
const ModelDescription = "bundled HAT model (1.5M parameters)"

// modelFiles are the checkpoint files the engine reads.
var modelFiles = []string{"config.json", "tokenizer.json", "model.safetensors"}

// WriteModel writes the bundled model into a folder under dir named by a
// hash of its files, unless that folder already holds them, and returns
// the folder: the engine loads checkpoints from disk. A folder from an
// older bundled model is left alone, so a binary never overwrites what
// another is serving.
func WriteModel(dir string) (string, error) {
	h := sha256.New()
	for _, name := range modelFiles {
		data, err := Model.ReadFile("model/" + name)
		if err != nil {
			return "", fmt.Errorf("bundled model: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", name, len(data))
		h.Write(data)
	}
	folder := filepath.Join(dir, ModelName+"-"+hex.EncodeToString(h.Sum(nil))[:12])
	if complete(folder) {
		return folder, nil
	}
	// The data folder holds the store too: private, as the store creates it.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("bundled model: %w", err)
	}
	// Written beside the final folder and renamed into place, so a
	// reader never sees half a checkpoint.
	tmp, err := os.MkdirTemp(dir, ".bundled-*")
	if err != nil {
		return "", fmt.Errorf("bundled model: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, name := range modelFiles {
		data, _ := Model.ReadFile("model/" + name)
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o600); err != nil {
			return "", fmt.Errorf("bundled model: %w", err)
		}
	}
	if err := os.Rename(tmp, folder); err != nil && !complete(folder) {
		return "", fmt.Errorf("bundled model: %w", err)
	}
	return folder, nil
}

// complete reports whether folder holds every checkpoint file.
func complete(folder string) bool {
	for _, name := range modelFiles {
		if _, err := os.Stat(filepath.Join(folder, name)); err != nil {
			return false
		}
	}
	return true
}

// ModelCacheDir is where commands without a data folder of their own
// write the bundled model: the user's cache folder, else the system's
// temporary folder.
func ModelCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "livehat", "models")
	}
	return filepath.Join(os.TempDir(), "livehat-models")
}
