package hsa

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// parseSchema decodes a tool's parameter schema with its key order.
func parseSchema(raw json.RawMessage) (*object, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		o := newObject()
		o.set("type", "object")
		o.set("properties", newObject())
		return o, nil
	}
	v, err := parseValue(raw)
	if err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	o, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("parameters: not a JSON object")
	}
	return o, nil
}

func encodeSchema(o *object) (json.RawMessage, error) {
	return encodeValue(o)
}

// refsLocal reports whether every $ref in v points into $defs or
// definitions. Structural edits move and rename properties, which would
// break a reference into them; references into the definitions survive
// because the definitions stay at the root.
func refsLocal(v any) bool {
	switch v := v.(type) {
	case *object:
		for _, k := range v.keys {
			switch k {
			case "$dynamicRef", "$recursiveRef":
				return false
			case "$ref":
				ref, _ := v.vals[k].(string)
				if !strings.HasPrefix(ref, "#/$defs/") && !strings.HasPrefix(ref, "#/definitions/") {
					return false
				}
			}
			if !refsLocal(v.vals[k]) {
				return false
			}
		}
	case []any:
		for _, e := range v {
			if !refsLocal(e) {
				return false
			}
		}
	}
	return true
}

// plainObject reports whether node is an object schema whose property
// names appear nowhere but in "properties" and "required", so renaming
// or reordering them is a complete edit.
func plainObject(node *object) bool {
	props, ok := node.obj("properties")
	if !ok {
		return false
	}
	for _, k := range []string{"patternProperties", "dependentRequired", "dependentSchemas", "dependencies",
		"propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not", "$ref",
		"default", "const", "enum", "examples", "minProperties", "maxProperties"} {
		if node.has(k) {
			return false
		}
	}
	if req, ok := node.get("required"); ok {
		arr, ok := req.([]any)
		if !ok {
			return false
		}
		for _, r := range arr {
			if _, ok := r.(string); !ok {
				return false
			}
		}
	}
	for _, k := range props.keys {
		if k == ArrayItems {
			return false
		}
	}
	return true
}

// walkObjects calls fn for every plain object schema reachable from node
// through properties and array items (not through $defs, whose objects
// are shared), passing the argument path to it. fn may rename the
// properties of the node it is given; the walk descends under the new names.
func walkObjects(node *object, path []string, fn func(node *object, path []string)) {
	if items, ok := node.obj("items"); ok && !node.has("prefixItems") {
		walkObjects(items, append(slices.Clip(path), ArrayItems), fn)
	}
	if !plainObject(node) {
		return
	}
	fn(node, path)
	props, _ := node.obj("properties")
	for _, k := range props.keys {
		if child, ok := props.obj(k); ok {
			walkObjects(child, append(slices.Clip(path), k), fn)
		}
	}
}

// renameProperty renames property from to to in a plain object schema,
// keeping its position in properties and required.
func renameProperty(node *object, from, to string) {
	props, _ := node.obj("properties")
	props.rename(from, to)
	v, _ := node.get("required")
	if req, ok := v.([]any); ok {
		for i, r := range req {
			if r == from {
				req[i] = to
			}
		}
	}
}

func propertyNames(node *object) []string {
	props, _ := node.obj("properties")
	if props == nil {
		return nil
	}
	return slices.Clone(props.keys)
}

func requiredNames(node *object) []string {
	var out []string
	if req, ok := node.get("required"); ok {
		arr, _ := req.([]any)
		for _, r := range arr {
			if s, ok := r.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// wrapSchema returns a schema whose single required property param holds
// the old arguments object. $schema, $id and the definitions stay at the
// root so local references still resolve.
func wrapSchema(root *object, param, description string) *object {
	inner := root.clone()
	out := newObject()
	for _, k := range []string{"$schema", "$id", "$defs", "definitions"} {
		if v, ok := inner.get(k); ok {
			out.set(k, v)
			inner.del(k)
		}
	}
	if !inner.has("description") && description != "" {
		inner.set("description", description)
	}
	out.set("type", "object")
	props := newObject()
	props.set(param, inner)
	out.set("properties", props)
	out.set("required", []any{param})
	out.set("additionalProperties", false)
	return out
}

// flattenable reports whether property param of root can be lifted: a
// required plain object with nothing but properties, whose names do not
// clash with its siblings.
func flattenable(root *object, param string) bool {
	if !plainObject(root) || !slices.Contains(requiredNames(root), param) {
		return false
	}
	props, _ := root.obj("properties")
	child, ok := props.obj(param)
	if !ok || !plainObject(child) {
		return false
	}
	for _, k := range child.keys {
		switch k {
		case "type", "properties", "required", "description", "title":
		case "additionalProperties":
			if b, ok := child.vals[k].(bool); !ok || b {
				return false
			}
		default:
			return false
		}
	}
	if t, ok := child.get("type"); ok && t != "object" {
		return false
	}
	for _, k := range propertyNames(child) {
		// A lifted property named like its parent would make the inverse
		// ambiguous, so it blocks flattening like any other clash.
		if props.has(k) {
			return false
		}
	}
	return true
}

// flattenSchema lifts the properties of object property param to the
// root, in its place, and returns their names.
func flattenSchema(root *object, param string) []string {
	props, _ := root.obj("properties")
	child, _ := props.obj(param)
	childProps, _ := child.obj("properties")
	lifted := slices.Clone(childProps.keys)

	newProps := newObject()
	for _, k := range props.keys {
		if k != param {
			newProps.set(k, props.vals[k])
			continue
		}
		for _, ck := range childProps.keys {
			newProps.set(ck, childProps.vals[ck])
		}
	}
	root.set("properties", newProps)

	var req []any
	for _, r := range requiredNames(root) {
		if r != param {
			req = append(req, r)
			continue
		}
		for _, cr := range requiredNames(child) {
			req = append(req, cr)
		}
	}
	if len(req) > 0 {
		root.set("required", req)
	} else {
		root.del("required")
	}
	return lifted
}
