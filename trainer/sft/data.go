// Package sft is stage 1 of Harness-Aware Training, HSA-SFT: supervised
// fine-tuning on expert trajectories from the simulated live room, each
// rendered under the harness it was collected in — the base harness or a
// variant drawn from the HSA training pool, with the gold mapped through
// the variant's transform. With augmentation off the same pipeline is
// Fixed-Harness SFT, the report's baseline.
//
// The package builds the trajectories (Build), writes them as JSONL in the
// chat-with-tools layout TRL and verl read (WriteJSONL), tokenizes them with
// assistant-only loss masks (Tokenize), and trains a model with resumable
// checkpoints (Train); RunRecipe runs the whole pipeline. The flags of
// `livehat train` and `livehat export` live in internal/command.
package sft

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/trainer/liveroom"
)

// DataConfig chooses the trajectories Build collects.
type DataConfig struct {
	// Seed makes the rooms, questions and variants reproducible.
	Seed uint64 `json:"seed"`
	// Rooms is the number of generated live rooms, Questions the number of
	// viewer questions asked in each.
	Rooms     int `json:"rooms"`
	Questions int `json:"questions"`
	// Room sizes the catalogs; QuestionTypes and Langs restrict the
	// questions (empty: all).
	Room          liveroom.RoomConfig     `json:"room"`
	QuestionTypes []liveroom.QuestionType `json:"question_types,omitempty"`
	Langs         []liveroom.Lang         `json:"langs,omitempty"`
	// General and Retrieval add that many conversations of the general
	// corpus and of the copy and retrieval warm-up (see General and
	// Retrieval); a base model is trained on them alone (Rooms 0).
	General   int `json:"general,omitempty"`
	Retrieval int `json:"retrieval,omitempty"`
	// SkillPicks adds that many skill-choice warm-up conversations (see
	// SkillPicks).
	SkillPicks int `json:"skill_picks,omitempty"`
	// Augment turns on Harness-State Augmentation; false is Fixed-Harness
	// SFT.
	Augment bool `json:"augment"`
	// VariantShare is the share of trajectories rendered under a variant
	// when Augment is on; the rest keep the base harness.
	VariantShare float64 `json:"variant_share"`
	// Transforms is how many training-pool families each variant draws.
	Transforms int `json:"transforms"`
	// Teacher is the base URL of an OpenAI-compatible server whose model
	// answers instead of the live room's scripted expert (empty: the
	// expert); TeacherModel names the model to ask for and TeacherAPIKey
	// authenticates (never written to run.json).
	Teacher       string `json:"teacher,omitempty"`
	TeacherModel  string `json:"teacher_model,omitempty"`
	TeacherAPIKey string `json:"-"`
	// ContextShare is the share of live-room trajectories rendered with
	// the stream context a console live session shows the model (the
	// featured item and the items on sale, liveroom.Room.StreamContext);
	// the others have none, as the evaluation suites do.
	ContextShare float64 `json:"context_share"`
	// MemoryShare is the share of live-room trajectories that begin with
	// one to four earlier questions of the same room and their replies, as
	// a live session's conversation memory shows them (read, not trained).
	MemoryShare float64 `json:"memory_share"`
	// RetryShare is the share of trajectories whose variant planned a
	// hook correction that keep the full retry (flawed reply, hook
	// feedback, corrected reply); the others are cut to the final correct
	// behaviour.
	RetryShare float64 `json:"retry_share"`

	// The job's data (issue #19). Each share is drawn from a generator of
	// its own, and a share of 0 draws nothing, so that data built without
	// them is the data built before they existed.

	// ShopShare is the share of rooms that are shop catalogs
	// (liveroom.ShopRoom: the catalog schema's every field, asked in the
	// shop family's phrasing grammars, facts left unstated included).
	ShopShare float64 `json:"shop_share,omitempty"`
	// LongShare is the share of shop rooms with 20 to 30 items, shown
	// with the stream context: the longest live prompts.
	LongShare float64 `json:"long_share,omitempty"`
	// StrategyShare is the share of the other rooms played as a strategy
	// episode (liveroom.StrategyEpisode): narration turns and viewer
	// questions in one session, each turn's prompt showing the session's
	// memory and the stream context, as served.
	StrategyShare float64 `json:"strategy_share,omitempty"`
	// FaultShare is the share of questions that need a tool answered
	// while one of their tools fails (timeout, malformed or empty result,
	// denial); PersistentShare of those fail every call, so the right
	// reply says the information is unavailable.
	FaultShare      float64 `json:"fault_share,omitempty"`
	PersistentShare float64 `json:"persistent_share,omitempty"`
	// OperatorShare is the share of variant trajectories rendered under
	// an operator's edit (hsa family "operator-edit": tools renamed and
	// described anew, reordered, arguments renamed through the
	// argument map, skills reworded) on top of the pool's families.
	OperatorShare float64 `json:"operator_share,omitempty"`
	// SkillRenameShare is the share of variant trajectories whose skills
	// are renamed once more on top (hsa family "skill-rename", mostly
	// coined ids): a renamed harness asks the model to find the reply
	// skill by its description, which three families drawn from the pool
	// ask of one trajectory in ten.
	SkillRenameShare float64 `json:"skill_rename_share,omitempty"`
	// FeedbackShare is the share of live-room questions (not faults, not
	// strategy episodes) whose trajectory shows a flawed first reply, the
	// feedback the harness's hooks send it back with and the right reply
	// (Critic): a compact model that ignores the grounding check's
	// feedback leaves its answers to the check's rewrite.
	FeedbackShare float64 `json:"feedback_share,omitempty"`
	// Critic plays those turns through the hooks; FeedbackShare needs one
	// (livehat train loads the example plugins for it).
	Critic Critic `json:"-"`
}

// DefaultDataConfig returns the HSA-SFT defaults: three in four
// trajectories under variants of three transforms each, one in five
// planned corrections kept in full.
func DefaultDataConfig() DataConfig {
	return DataConfig{Seed: 1, Rooms: 40, Questions: 12, Augment: true, VariantShare: 0.75, Transforms: 3, RetryShare: 0.2, ContextShare: 0.5, MemoryShare: 0.5}
}

func (c DataConfig) validate() error {
	switch {
	case c.Rooms < 0 || c.General < 0 || c.Retrieval < 0 || c.SkillPicks < 0:
		return fmt.Errorf("sft: negative data counts: %d rooms, %d general, %d retrieval, %d skill picks", c.Rooms, c.General, c.Retrieval, c.SkillPicks)
	case c.Rooms == 0 && c.General+c.Retrieval+c.SkillPicks == 0:
		return errors.New("sft: data needs rooms, general or retrieval conversations")
	case c.Room.Variety < -1 || c.Room.Variety > 5:
		return fmt.Errorf("sft: room variety %d: want -1 (the first stages' rooms), 0 (plain rooms) to 5", c.Room.Variety)
	case c.FeedbackShare < 0 || c.FeedbackShare > 1:
		return fmt.Errorf("sft: feedback share %g: want it in [0, 1]", c.FeedbackShare)
	case c.Rooms > 0 && c.Questions <= 0:
		return fmt.Errorf("sft: data needs questions per room, got %d", c.Questions)
	case c.VariantShare < 0 || c.VariantShare > 1 || c.RetryShare < 0 || c.RetryShare > 1 || c.ContextShare < 0 || c.ContextShare > 1 || c.MemoryShare < 0 || c.MemoryShare > 1:
		return fmt.Errorf("sft: shares must lie in [0, 1], got variant %g, retry %g, context %g and memory %g", c.VariantShare, c.RetryShare, c.ContextShare, c.MemoryShare)
	case !inUnit(c.ShopShare) || !inUnit(c.LongShare) || !inUnit(c.StrategyShare) || !inUnit(c.FaultShare) || !inUnit(c.PersistentShare) || !inUnit(c.OperatorShare) || !inUnit(c.SkillRenameShare):
		return fmt.Errorf("sft: shares must lie in [0, 1], got shop %g, long %g, strategy %g, fault %g, persistent %g, operator %g and skill rename %g",
			c.ShopShare, c.LongShare, c.StrategyShare, c.FaultShare, c.PersistentShare, c.OperatorShare, c.SkillRenameShare)
	case c.Teacher != "" && (c.StrategyShare > 0 || c.FaultShare > 0):
		return errors.New("sft: strategy episodes and tool faults are answered by the room's expert; leave --teacher out or set their shares to 0")
	case c.Augment && c.Transforms <= 0:
		return fmt.Errorf("sft: augmentation needs at least one transform per variant, got %d", c.Transforms)
	}
	return nil
}

func inUnit(x float64) bool { return x >= 0 && x <= 1 }

// Message is one chat turn of a trajectory. Train is false on a turn that
// must not be learned (the flawed first reply of a kept retry); the key is
// written only then, as axolotl's per-turn "train" flag.
type Message struct {
	chat.Message
	Train *bool `json:"train,omitempty"`
}

// Trajectory is one training conversation: the rendered messages (system
// prompt included) and the tools the chat template lists, with where it
// came from.
type Trajectory struct {
	ID       string                 `json:"id"`
	Messages []Message              `json:"messages"`
	Tools    []harness.FunctionSpec `json:"tools"`
	Question liveroom.Question      `json:"question"`
	// Harness and HarnessVersion name the harness the trajectory was
	// rendered under; Record is its HSA provenance (nil for the base).
	Harness        string      `json:"harness"`
	HarnessVersion string      `json:"harness_version"`
	Record         *hsa.Record `json:"hsa_record,omitempty"`
	// Retry reports that a hook correction is kept in full.
	Retry bool `json:"retry,omitempty"`
	// Feedback reports a flawed first reply sent back by the hooks
	// (DataConfig.FeedbackShare).
	Feedback bool `json:"feedback,omitempty"`
	// Source names the generator of a job trajectory: "shop", "strategy",
	// or "fault" (a question answered under a tool fault); empty for the
	// rooms of before them and the general corpus.
	Source string `json:"source,omitempty"`
	// Fault is the tool fault a "fault" trajectory was answered under.
	Fault *liveroom.Fault `json:"fault,omitempty"`
}

// BuildStats counts what Build kept and why it dropped the rest.
type BuildStats struct {
	Kept, Variants, Retries int
	// Silent counts questions whose correct answer is silence (spam): no
	// assistant turn to learn from.
	Silent int
	// Rejected counts trajectories the grader did not pass (Accuracy < 1
	// or Effectiveness < 0.5).
	Rejected int
	// NotApplicable counts variants that could not carry a question's gold.
	NotApplicable int
	// Shop, Strategy and Faults count the kept trajectories of the job's
	// generators (see DataConfig.ShopShare), Feedback those with a flawed
	// reply the hooks sent back (DataConfig.FeedbackShare).
	Shop, Strategy, Faults, Feedback int
}

// Build collects teacher trajectories: for every room and question, the
// teacher (the live room's expert, or the model at cfg.Teacher) answers
// under the base harness or, with augmentation, under a variant from the
// training pool (the expert maps the gold through the variant's transform;
// a remote model reads the variant and its tools are served through the
// inverse mapping). Each transcript is graded and kept only with Accuracy 1
// and Effectiveness ≥ 0.5, as the report filters teacher trajectories.
// With the expert the result depends only on base and cfg.
func Build(ctx context.Context, base *harness.Harness, cfg DataConfig) ([]Trajectory, BuildStats, error) {
	var st BuildStats
	if base == nil {
		return nil, st, errors.New("sft: no base harness")
	}
	if err := cfg.validate(); err != nil {
		return nil, st, err
	}
	// A resumed run reads its data back, so only building needs them.
	if cfg.FeedbackShare > 0 && cfg.Critic == nil {
		return nil, st, errors.New("sft: a feedback share needs a critic to run the harness's hooks")
	}
	teach, err := newTeacher(cfg)
	if err != nil {
		return nil, st, err
	}
	qcfg := liveroom.QuestionConfig{Types: cfg.QuestionTypes, Langs: cfg.Langs}
	// The warm-up comes first: the held-out examples are the last built,
	// and they should be live-room trajectories when there are any.
	out := append(General(cfg.Seed*1_000_033+1, cfg.General), Retrieval(cfg.Seed*1_000_033+2, cfg.Retrieval, cfg.Room.Variety)...)
	picks, err := SkillPicks(cfg.Seed*1_000_033+3, cfg.SkillPicks, base)
	if err != nil {
		return nil, st, err
	}
	out = append(out, picks...)
	st.Kept = len(out)
	for r := range cfg.Rooms {
		if err := ctx.Err(); err != nil {
			return nil, st, err
		}
		room := liveroom.NewRoom(cfg.Seed*1_000_003+uint64(r), cfg.Room)
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(r)))
		// The job's generators draw from a generator of their own, so
		// that the draws above stay what they were.
		mix := rand.New(rand.NewPCG(cfg.Seed^0x6a6f62206d6978, uint64(r))) // "job mix"
		plan, err := planRoom(room, mix, cfg, qcfg, uint64(r))
		if err != nil {
			return nil, st, fmt.Errorf("sft: room %d: %w", r, err)
		}
		room = plan.room
		var said []harness.Message // the room's questions and final replies so far
		for qi, step := range plan.steps {
			q := step.Question
			if q.Gold.Silent {
				st.Silent++
				continue
			}
			useVariant := cfg.Augment && rng.Float64() < cfg.VariantShare
			keepRetry := rng.Float64() < cfg.RetryShare
			variantSeed := rng.Int64()
			var streamContext []harness.ContextItem
			// A share of 0 draws nothing, so data built without a kind
			// of example is the data built before that kind existed.
			if cfg.ContextShare > 0 && rng.Float64() < cfg.ContextShare || plan.context {
				streamContext = room.StreamContext()
			}
			var memory []harness.Message
			if plan.source == sourceStrategy {
				// One session: the prompt shows its memory as the
				// runtime keeps it, the last runtime.Config.Memory
				// messages.
				memory = said[max(0, len(said)-sessionMemory):]
			} else if pairs := len(said) / 2; pairs > 0 && cfg.MemoryShare > 0 && rng.Float64() < cfg.MemoryShare {
				memory = said[len(said)-2*(1+rng.IntN(min(pairs, 4))):]
			}
			ex := example{q: q, narration: step.Narration, source: plan.source}
			if cfg.FaultShare > 0 && mix.Float64() < cfg.FaultShare {
				ex.fault = drawFault(mix, q, cfg.PersistentShare)
			}
			if ex.fault != nil {
				ex.source = sourceFault
			}
			ex.operator = useVariant && cfg.OperatorShare > 0 && mix.Float64() < cfg.OperatorShare
			ex.skillRename = useVariant && cfg.SkillRenameShare > 0 && mix.Float64() < cfg.SkillRenameShare
			if cfg.FeedbackShare > 0 && ex.fault == nil && plan.source != sourceStrategy && mix.Float64() < cfg.FeedbackShare {
				ex.critic = cfg.Critic
			}
			tr, err := collect(ctx, teach, base, room, ex, streamContext, memory, useVariant, keepRetry, variantSeed, cfg.Transforms)
			if errors.Is(err, hsa.ErrNotApplicable) {
				st.NotApplicable++
				continue
			}
			if errors.Is(err, errRejected) {
				st.Rejected++
				continue
			}
			if err != nil {
				return nil, st, fmt.Errorf("sft: room %d question %d (%s): %w", r, qi, q.ID, err)
			}
			tr.ID = fmt.Sprintf("r%d-q%d", r, qi)
			if last := tr.Messages[len(tr.Messages)-1]; last.Role == harness.RoleAssistant && last.Content != "" {
				said = append(said, harness.Message{Role: harness.RoleUser, Content: ex.userText()}, harness.Message{Role: harness.RoleAssistant, Content: last.Content})
			}
			st.Kept++
			switch tr.Source {
			case sourceShop:
				st.Shop++
			case sourceStrategy:
				st.Strategy++
			case sourceFault:
				st.Faults++
			}
			if tr.Record != nil {
				st.Variants++
			}
			if tr.Retry {
				st.Retries++
			}
			if tr.Feedback {
				st.Feedback++
			}
			out = append(out, tr)
		}
	}
	if len(out) == 0 {
		return nil, st, errors.New("sft: no trajectory survived")
	}
	return out, st, nil
}

var errRejected = errors.New("the grader rejected the trajectory")

// collect makes one trajectory for the example's question.
func collect(ctx context.Context, teach teacher, base *harness.Harness, room *liveroom.Room, ex example, streamContext []harness.ContextItem, memory []harness.Message, variant, keepRetry bool, seed int64, transforms int) (Trajectory, error) {
	q := ex.q
	graded := q
	if ex.fault != nil {
		graded = q.WithFault(*ex.fault, room)
	}
	h := base
	var rec *hsa.Record
	var mapping *hsa.Mapping
	if variant {
		opts := hsa.Options{Gold: q.Gold.Calls, MinToolRounds: len(graded.Gold.Calls)}
		v, r, err := hsa.Augment(base, hsa.PoolTrain, seed, transforms, opts)
		if err == nil && ex.skillRename {
			v, r, err = skillRenameOnTop(v, r, seed, opts)
		}
		if err == nil && ex.operator {
			v, r, err = operatorEdit(v, r, seed, opts)
		}
		if err != nil {
			return Trajectory{}, err
		}
		m := r.Mapping()
		h, rec, mapping = v, &r, &m
	}
	var msgs []harness.Message
	var err error
	if ex.fault != nil {
		msgs, err = room.ExpertUnderFault(h, mapping, q, *ex.fault)
	} else {
		msgs, err = teach.answer(ctx, room, h, mapping, q, harness.Conversation{Context: streamContext, Messages: memory})
	}
	if err != nil {
		return Trajectory{}, err
	}
	g := room.GradeTranscript(graded, msgs, liveroom.GradeOptions{Mapping: mapping, ReplyChars: h.Pipeline.ReplyChars.Value})
	if g.Accuracy < 1 || g.Effectiveness < 0.5 || ex.source != "" && (g.Score < 1 || len(g.Unbacked) > 0) {
		return Trajectory{}, errRejected
	}
	q = graded
	retry, feedback := false, false
	if ex.critic != nil {
		if msgs, feedback, err = withFeedback(ctx, ex.critic, h, room, q, msgs, streamContext); err != nil {
			return Trajectory{}, err
		}
	}
	if mapping != nil && keepRetry && !feedback {
		for _, c := range mapping.Corrections() {
			if msgs, err = hsa.ApplyCorrection(h, msgs, c); err != nil {
				return Trajectory{}, err
			}
			retry = true
		}
	}
	turn := append(append(slices.Clip(memory), harness.Message{Role: harness.RoleUser, Content: ex.userText()}), msgs...)
	conv := harness.Conversation{Context: streamContext, Messages: turn}
	// The local engine lists tools through the chat template, so the
	// harness leaves its tools section out, as the runtime does for it.
	p, err := harness.Render(h, conv, harness.RenderOptions{OmitToolsSection: true})
	if err != nil {
		return Trajectory{}, err
	}
	tr := Trajectory{Tools: p.Tools, Question: q, Harness: h.Name, HarnessVersion: h.Version(), Record: rec, Retry: retry, Feedback: feedback,
		Source: ex.source, Fault: ex.fault}
	no := false
	for i, m := range p.Messages {
		cm := Message{Message: chat.Message{Role: m.Role, Content: m.Content, Name: m.Name}}
		for _, c := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, chat.ToolCall{Name: c.Name, Arguments: c.Arguments})
		}
		// A reply the hooks rejected is followed by their feedback as a
		// user turn, and a remembered reply by the next question: the
		// model reads them but must not learn to write them.
		if m.Role == harness.RoleAssistant && i+1 < len(p.Messages) && p.Messages[i+1].Role == harness.RoleUser {
			cm.Train = &no
		}
		tr.Messages = append(tr.Messages, cm)
	}
	return tr, nil
}

// ChatMessages returns the trajectory's messages and tools in the model
// core's chat types, ready for chat.Render.
func (t Trajectory) ChatMessages() ([]chat.Message, []chat.Tool) {
	msgs := make([]chat.Message, len(t.Messages))
	for i, m := range t.Messages {
		msgs[i] = m.Message
	}
	tools := make([]chat.Tool, len(t.Tools))
	for i, s := range t.Tools {
		tools[i] = chat.Tool{Name: s.Function.Name, Description: s.Function.Description, Parameters: s.Function.Parameters}
	}
	return msgs, tools
}
