;; A module whose start function takes a parameter: the host cannot call
;; it before the first call and must refuse the module at load.
(module
  (memory (export "memory") 1)
  (func (export "_initialize") (param i32))
  (func (export "allow") (result i32) (i32.const 0)))
