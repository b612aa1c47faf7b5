;; Edge cases of the Extism imports, written by hand so that each export
;; does exactly one (mis)behaviour. Assembled by go generate (wat_test.go).
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "free" (func $free (param i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "load_u64" (func $load_u64 (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_offset" (func $input_offset (result i64)))
  (import "extism:host/env" "input_load_u64" (func $input_load_u64 (param i64) (result i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))
  (import "extism:host/env" "config_get" (func $config_get (param i64) (result i64)))
  (import "extism:host/env" "http_request" (func $http_request (param i64 i64) (result i64)))
  (import "extism:host/env" "http_status_code" (func $http_status_code (result i32)))
  (import "extism:host/env" "http_headers" (func $http_headers (result i64)))
  (import "extism:host/user" "livehat_catalog_lookup" (func $catalog (param i64) (result i64)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_create_directory"
    (func $path_create_directory (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "/etc/passwd")  ;; 11 bytes
  (data (i32.const 1040) "etc/passwd")   ;; 10 bytes; 1056 holds an opened fd
  (export "livehat_abi_v1" (func $abi))
  (func $abi (result i32) (i32.const 0))

  ;; {"action":"allow"} padded with spaces to 24 bytes: three stores.
  (func $allow (export "allow") (result i32)
    (local $o i64)
    (local.set $o (call $alloc (i64.const 24)))
    (call $store_u64 (local.get $o) (i64.const 0x6e6f69746361227b))        ;; {"action
    (call $store_u64 (i64.add (local.get $o) (i64.const 8)) (i64.const 0x776f6c6c61223a22)) ;; ":"allow
    (call $store_u64 (i64.add (local.get $o) (i64.const 16)) (i64.const 0x2020202020207d22)) ;; "} and spaces
    (call $output_set (local.get $o) (i64.const 24))
    (i32.const 0))

  ;; The input, returned as the output without a copy.
  (func (export "echo") (result i32)
    (call $output_set (call $input_offset) (call $input_length))
    (i32.const 0))

  ;; A guest error: status 1 and the message "boom".
  (func (export "fail_msg") (result i32)
    (local $o i64)
    (local.set $o (call $alloc (i64.const 4)))
    (call $store_u8 (local.get $o) (i32.const 98))
    (call $store_u8 (i64.add (local.get $o) (i64.const 1)) (i32.const 111))
    (call $store_u8 (i64.add (local.get $o) (i64.const 2)) (i32.const 111))
    (call $store_u8 (i64.add (local.get $o) (i64.const 3)) (i32.const 109))
    (call $error_set (local.get $o))
    (i32.const 1))
  (func (export "fail_status") (result i32) (i32.const 7))
  (func (export "no_output") (result i32) (i32.const 0))

  ;; Out-of-bounds pointers and lengths.
  (func (export "oob_output") (result i32)
    (call $output_set (i64.const 0x10000000000) (i64.const 10)) (i32.const 0))
  (func (export "oob_output_len") (result i32)
    (call $output_set (call $input_offset) (i64.const 0xffffffffffff)) (i32.const 0))
  (func (export "oob_output_wrap") (result i32)
    (call $output_set (i64.const -8) (i64.const 16)) (i32.const 0))
  (func (export "oob_load") (result i32)
    (drop (call $load_u64 (i64.const 0x200000000))) (i32.const 0))
  (func (export "null_load") (result i32)
    (drop (call $load_u64 (i64.const 0))) (i32.const 0))
  (func (export "bad_error_ptr") (result i32)
    (call $error_set (i64.const 12345)) (i32.const 1))
  (func (export "input_past_end") (result i32)
    (drop (call $input_load_u64 (call $input_length))) (i32.const 0))
  (func (export "huge_alloc") (result i32)
    (drop (call $alloc (i64.const 0x10000000000))) (i32.const 0))
  (func (export "big_output") (result i32)
    (local $o i64)
    (local.set $o (call $alloc (i64.const 2000000)))
    (call $output_set (local.get $o) (i64.const 2000000)) (i32.const 0))

  ;; WASI proc_exit ends the call: 3 fails it with that code; 0 after an
  ;; output is a success (Extism's rule), 0 after an error the error.
  (func (export "exit3") (result i32)
    (call $proc_exit (i32.const 3)) (i32.const 0))
  (func (export "exit0") (result i32)
    (call $output_set (call $input_offset) (call $input_length))
    (call $proc_exit (i32.const 0)) (i32.const 0))
  (func (export "exit0_error") (result i32)
    (call $error_set (call $input_offset))
    (call $proc_exit (i32.const 0)) (i32.const 0))

  ;; Files: the WASI errno of opening an absolute and a relative path on
  ;; descriptor 3, an absolute one on stdin (0), and of making a directory,
  ;; as four little-endian u64.
  (func (export "files") (result i32)
    (local $o i64)
    (local.set $o (call $alloc (i64.const 32)))
    (call $store_u64 (local.get $o) (i64.extend_i32_u (call $path_open
      (i32.const 3) (i32.const 0) (i32.const 1024) (i32.const 11) (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 1056))))
    (call $store_u64 (i64.add (local.get $o) (i64.const 8)) (i64.extend_i32_u (call $path_open
      (i32.const 3) (i32.const 0) (i32.const 1040) (i32.const 10) (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 1056))))
    (call $store_u64 (i64.add (local.get $o) (i64.const 16)) (i64.extend_i32_u (call $path_open
      (i32.const 0) (i32.const 0) (i32.const 1024) (i32.const 11) (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 1056))))
    (call $store_u64 (i64.add (local.get $o) (i64.const 24)) (i64.extend_i32_u
      (call $path_create_directory (i32.const 3) (i32.const 1024) (i32.const 11))))
    (call $output_set (local.get $o) (i64.const 32))
    (i32.const 0))

  ;; Traps of the guest itself.
  (func (export "unreachable") (result i32) (unreachable))
  (func $recurse (export "recurse") (result i32) (call $recurse))
  (func (export "spin") (result i32) (loop $l (br $l)) (i32.const 0))
  (func (export "grow") (result i32)
    (loop $l (br_if $l (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
    (unreachable))

  ;; Host functions the manifest may not allow.
  (func (export "catalog") (result i32)
    (call $output_set (call $catalog (call $input_offset)) (call $length (call $catalog (call $input_offset))))
    (i32.const 0))
  ;; An HTTP request: its response offset, status code and headers
  ;; offset, as three little-endian u64.
  (func (export "network") (result i32)
    (local $o i64)
    (local $res i64)
    (local.set $res (call $http_request (call $input_offset) (i64.const 0)))
    (local.set $o (call $alloc (i64.const 24)))
    (call $store_u64 (local.get $o) (local.get $res))
    (call $store_u64 (i64.add (local.get $o) (i64.const 8)) (i64.extend_i32_u (call $http_status_code)))
    (call $store_u64 (i64.add (local.get $o) (i64.const 16)) (call $http_headers))
    (call $output_set (local.get $o) (i64.const 24))
    (i32.const 0))
  (func (export "config") (result i32)
    (local $v i64)
    (local.set $v (call $config_get (call $input_offset)))
    (call $output_set (local.get $v) (call $length (local.get $v)))
    (i32.const 0))
)
