package livebench

import (
	"context"
	"fmt"
	"slices"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/engine"
	"github.com/livehat/livehat/model/tokenizer"
	"github.com/livehat/livehat/trainer/liveroom"
)

// RandomEngine returns an engine over a random-weight model of the given
// size, "tiny" or "small" (40M parameters), with a vocabulary trained on
// live-room text: its replies are noise, but its prompts, prefix cache
// and compute are those of a real compact model of that size. It computes
// on cpu, which the caller closes after the engine.
func RandomEngine(size string, cpu *model.CPU, opts engine.Options) (*engine.Engine, error) {
	cfg, err := model.Preset("tiny")
	if err != nil {
		return nil, err
	}
	switch size {
	case "tiny":
	case "small":
		cfg.HiddenSize, cfg.IntermediateSize, cfg.NumLayers, cfg.NumHeads, cfg.NumKVHeads, cfg.HeadDim = 512, 1408, 8, 8, 2, 64
	default:
		return nil, fmt.Errorf("livebench: random model size %q: want tiny or small", size)
	}
	var corpus []string
	for seed := uint64(1); seed <= 20; seed++ {
		room := liveroom.NewRoom(seed, liveroom.RoomConfig{})
		for _, q := range room.Questions(seed, 50, liveroom.QuestionConfig{}) {
			corpus = append(corpus, q.Text)
		}
		if data, err := room.CatalogJSON(); err == nil {
			corpus = append(corpus, string(data))
		}
	}
	tok, err := tokenizer.Train(context.Background(), slices.Values(corpus), tokenizer.TrainConfig{VocabSize: 2000,
		SpecialTokens: []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>"}})
	if err != nil {
		return nil, err
	}
	cfg.VocabSize = tok.VocabSize()
	cfg.MaxPositionEmbeddings = 32768
	if id, ok := tok.TokenID("<|im_end|>"); ok {
		cfg.EOSTokenID = id
	}
	m, err := model.NewRandom(cfg, 1, model.Options{DType: model.F32, Backend: cpu})
	if err != nil {
		return nil, err
	}
	return engine.New(m, tok, opts)
}
