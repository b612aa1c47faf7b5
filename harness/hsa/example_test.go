package hsa_test

import (
	"fmt"

	"github.com/livehat/livehat/harness/hsa"
)

func ExampleMapping() {
	// A mapping as a tool-rename and a wrap family would record it.
	m := hsa.Mapping{Steps: []hsa.Step{
		{Op: hsa.OpRenameTool, Tool: "get_price", To: "fetchCost"},
		{Op: hsa.OpRenameParam, Tool: "fetchCost", From: "item_id", To: "sku"},
	}}.Then(hsa.Mapping{Steps: []hsa.Step{{Op: hsa.OpWrap, Tool: "fetchCost", Param: "request"}}})

	gold := hsa.Call{Name: "get_price", Arguments: map[string]any{"item_id": "A1"}}
	mapped, err := m.Map(gold)
	if err != nil {
		fmt.Println(err)
		return
	}
	back, err := m.Inverse(mapped)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(mapped.Name, mapped.Arguments)
	fmt.Println(back.Name, back.Arguments, hsa.SameCall(back, gold))
	// Output:
	// fetchCost map[request:map[sku:A1]]
	// get_price map[item_id:A1] true
}
