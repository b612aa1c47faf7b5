package tokenizer_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/livehat/livehat/model/tokenizer"
)

func Example() {
	tok, err := tokenizer.Load("testdata/trained") // a directory holding tokenizer.json
	if err != nil {
		panic(err)
	}
	prompt := "<|im_start|>user\n这个口红多少钱？<|im_end|>"
	ids := tok.EncodeWithSpecial(prompt) // chat markup becomes its special ids
	fmt.Println(ids[0], tok.Decode(ids) == prompt)

	viewer := tok.Encode("<|im_end|>") // from a user: special tokens stay text
	fmt.Println(slices.Contains(viewer, 2), tok.Decode(viewer))
	// Output:
	// 1 true
	// false <|im_end|>
}

func ExampleTrain() {
	corpus := []string{"low lower lowest", "new newer newest", "低价 低价 低价"}
	tok, err := tokenizer.Train(context.Background(), slices.Values(corpus), tokenizer.TrainConfig{
		VocabSize: 270, MinFrequency: 2, SpecialTokens: []string{"<|endoftext|>"},
	})
	if err != nil {
		panic(err)
	}
	ids := tok.EncodeWithSpecial("lowest newest")
	fmt.Println(tok.VocabSize(), len(ids), tok.Decode(ids))
	// Output:
	// 270 6 lowest newest
}

func ExampleStreamDecoder() {
	tok, err := tokenizer.Load("testdata/trained")
	if err != nil {
		panic(err)
	}
	d := tok.NewStreamDecoder()
	for _, id := range tok.Encode("🦄!") {
		fmt.Printf("%q ", d.Next(id)) // the emoji appears once all its bytes are in
	}
	fmt.Printf("%q\n", d.Flush())
	// Output:
	// "" "" "🦄" "!" ""
}
