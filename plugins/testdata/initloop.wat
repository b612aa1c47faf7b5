;; A module whose start function never returns: loading must fail, not hang.
(module
  (memory (export "memory") 1)
  (func (export "_initialize") (loop $l (br $l)))
  (func (export "allow") (result i32) (i32.const 0)))
