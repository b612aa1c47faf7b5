;; A module that imports an Extism user function this host lacks.
(module
  (import "extism:host/user" "launch_missiles" (func $launch (param i64) (result i64)))
  (memory (export "memory") 1)
  (func (export "allow") (result i32) (i32.const 0)))
