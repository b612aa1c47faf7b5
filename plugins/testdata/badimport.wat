;; A module that imports a host function nobody provides.
(module
  (import "env" "system" (func $system (param i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "allow") (result i32) (i32.const 0)))
