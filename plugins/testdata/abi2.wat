;; A module built for a future ABI version: the host must refuse it.
(module
  (memory (export "memory") 1)
  (func (export "livehat_abi_v2") (result i32) (i32.const 0))
  (func (export "allow") (result i32) (i32.const 0)))
