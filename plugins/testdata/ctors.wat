;; A module with static constructors, as clang builds C or C++ for
;; --target=wasm32-unknown-unknown with -Wl,--export=__wasm_call_ctors:
;; nothing in the module calls the constructors, so the host must run
;; them, once per instance, before any call.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (global $runs (mut i64) (i64.const 0))   ;; constructor runs
  (global $value (mut i64) (i64.const 0))  ;; what a constructor built

  (func (export "__wasm_call_ctors")
    (global.set $runs (i64.add (global.get $runs) (i64.const 1)))
    (global.set $value (i64.const 42)))

  ;; The output is two little-endian u64: constructor runs and the value.
  (func (export "state") (result i32)
    (local $o i64)
    (local.set $o (call $alloc (i64.const 16)))
    (call $store_u64 (local.get $o) (global.get $runs))
    (call $store_u64 (i64.add (local.get $o) (i64.const 8)) (global.get $value))
    (call $output_set (local.get $o) (i64.const 16))
    (i32.const 0))
  (func (export "trap") (result i32) (unreachable))
)
