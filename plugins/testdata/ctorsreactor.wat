;; A WASI reactor that also exports __wasm_call_ctors (as wasm-ld does
;; with --export-all): its _initialize calls the constructors itself, as
;; wasi-libc's does. The host must run only __wasm_call_ctors, as
;; Extism's runtime does: running both would construct twice.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (global $runs (mut i64) (i64.const 0))     ;; constructor runs
  (global $reactor (mut i64) (i64.const 0))  ;; _initialize runs

  (func $ctors (export "__wasm_call_ctors")
    (global.set $runs (i64.add (global.get $runs) (i64.const 1))))
  (func (export "_initialize")
    (global.set $reactor (i64.add (global.get $reactor) (i64.const 1)))
    (call $ctors))

  ;; The output is two little-endian u64: constructor and _initialize runs.
  (func (export "state") (result i32)
    (local $o i64)
    (local.set $o (call $alloc (i64.const 16)))
    (call $store_u64 (local.get $o) (global.get $runs))
    (call $store_u64 (i64.add (local.get $o) (i64.const 8)) (global.get $reactor))
    (call $output_set (local.get $o) (i64.const 16))
    (i32.const 0))
)
