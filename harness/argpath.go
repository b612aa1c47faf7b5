package harness

import "strings"

// An argument a tool's catalog_args, query_args or variant_args names is a
// top-level property of its parameters ("item_id"), or a property of a
// top-level object property, written "object.property" ("spec.item_id"):
// a harness whose tool takes its arguments wrapped in one object (an
// operator's edit, or augmentation's) still names them.

// ArgValue returns the value the argument name points at in a call's
// arguments; false when the call does not set it.
func ArgValue(args map[string]any, name string) (any, bool) {
	outer, inner, nested := strings.Cut(name, ".")
	v, ok := args[outer]
	if !ok || !nested {
		return v, ok
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return nil, false
	}
	v, ok = obj[inner]
	return v, ok
}

// schemaArg finds the argument name in a parameters schema: the object
// schema that declares it (with its "properties" and "required") and the
// property's own schema.
func schemaArg(schema map[string]any, name string) (holder, prop map[string]any, key string, ok bool) {
	holder, key = schema, name
	if outer, inner, nested := strings.Cut(name, "."); nested {
		props, _ := schema["properties"].(map[string]any)
		if holder, ok = props[outer].(map[string]any); !ok {
			return nil, nil, "", false
		}
		key = inner
	}
	props, _ := holder["properties"].(map[string]any)
	prop, ok = props[key].(map[string]any)
	return holder, prop, key, ok
}
