//go:build wasip1

package main

import (
	"slices"
	"strings"
	"time"

	"github.com/livehat/livehat/sdk"
)

//go:wasmexport check_grounding
func checkGrounding() int32 {
	return sdk.Hook(func(in *sdk.HookInput) sdk.Decision {
		cfg, err := ParseConfig(in.Config)
		if err != nil {
			return sdk.Deny("grounding: " + err.Error())
		}
		t := Turn{Reply: in.Text, Message: in.Message, Lang: in.Lang, Now: sdk.Now().In(streamZone), Attempt: in.Attempt,
			Attempts: in.Attempts, Config: cfg}
		if in.Viewer != nil {
			// A live session knows a viewer by the handle the chat
			// shows, which it passes as the id.
			t.Viewer = in.Viewer.Name
			if t.Viewer == "" {
				t.Viewer = in.Viewer.ID
			}
		}
		for _, c := range in.Calls {
			t.Calls = append(t.Calls, Call{Name: c.Name, Export: c.Export, Arguments: c.Arguments, Result: c.Result})
		}
		for _, c := range in.Context {
			t.Context = append(t.Context, ContextItem{Title: c.Title, Text: c.Text})
		}
		t.Items = catalogItems(&t)
		return Decide(t)
	})
}

// streamZone is the zone a stream's viewers count days in: the platform's
// streams are China's (UTC+8, no daylight saving).
var streamZone = time.FixedZone("CST", 8*60*60)

// catalogItems asks the stream's catalog for the items the turn is about:
// those the reply or the message names, those the calls looked up and
// those at the link numbers the reply states. A lookup that fails leaves
// its items out, so fewer names are backed: the check fails closed.
func catalogItems(t *Turn) []Item {
	var items []Item
	add := func(res *sdk.CatalogResult, err error) {
		if err != nil || res == nil {
			return
		}
		for _, p := range res.Products {
			if !slices.ContainsFunc(items, func(it Item) bool { return it.ID == p.ID }) {
				items = append(items, Item{ID: p.ID, Name: p.Name, Aliases: p.Aliases, Link: p.Link})
			}
		}
	}
	// One lookup for both texts, of names only: each lookup costs the
	// guest a host call and a decode of what it answers.
	if text := strings.TrimSpace(t.Reply + "\n" + t.Message); text != "" {
		add(sdk.Lookup(sdk.CatalogQuery{Kind: "product", Text: text, Limit: 20, NamesOnly: true}))
	}
	for _, c := range t.parsedCalls() {
		for _, id := range c.itemIDs() {
			if !slices.ContainsFunc(items, func(it Item) bool { return it.ID == id }) {
				add(sdk.Lookup(sdk.CatalogQuery{Kind: "product", ID: id, NamesOnly: true}))
			}
		}
	}
	for _, n := range statedLinks(t.Reply) {
		add(sdk.Lookup(sdk.CatalogQuery{Kind: "product", Link: n, NamesOnly: true}))
	}
	return items
}
