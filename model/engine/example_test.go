package engine_test

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/engine"
	"github.com/livehat/livehat/model/tokenizer"
)

func ExampleEngine_Generate() {
	// A real deployment loads a checkpoint: engine.Load(dir, engine.Options{}).
	// Here a vocabulary is trained and a model of the tiny shape gets random
	// weights.
	corpus := []string{"Welcome to the live room!", "How much is the red jacket?", "欢迎来到直播间！"}
	tok, err := tokenizer.Train(context.Background(), slices.Values(corpus), tokenizer.TrainConfig{
		VocabSize: 300, SpecialTokens: []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"}})
	if err != nil {
		log.Fatal(err)
	}
	cfg, _ := model.Preset("tiny")
	cfg.VocabSize = tok.VocabSize()
	cpu := model.NewCPU(1)
	defer cpu.Close()
	m, err := model.NewRandom(cfg, 1, model.Options{Backend: cpu})
	if err != nil {
		log.Fatal(err)
	}
	e, err := engine.New(m, tok, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()

	req := engine.Request{
		Messages: []chat.Message{
			{Role: chat.RoleSystem, Content: "You are the host of a live room."},
			{Role: chat.RoleUser, Content: "How much is the red jacket?"},
		},
		MaxTokens: 8,
		IgnoreEOS: true,
	}
	var streamed strings.Builder
	res, err := e.Generate(context.Background(), req, func(d engine.Delta) error {
		streamed.WriteString(d.Reasoning + d.Content) // speak it, show it, …
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.FinishReason, res.Usage.CompletionTokens, res.Usage.PromptTokens > 0)
	// Output: length 8 true
}
