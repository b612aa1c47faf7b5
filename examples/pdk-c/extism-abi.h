/*
 * The part of the Extism guest ABI that screen.c uses, declared for clang's
 * WebAssembly targets, so that the example builds with nothing but clang.
 *
 * The names and signatures are those of the Extism C PDK (extism-pdk.h from
 * github.com/extism/c-pdk): a plugin written against this file builds
 * unchanged with the PDK instead (define EXTISM_IMPLEMENTATION and include
 * extism-pdk.h), which offers much more. LiveHAT's contract is sdk/ABI.md.
 */
#ifndef LIVEHAT_EXTISM_ABI_H
#define LIVEHAT_EXTISM_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A block of the host's kernel memory, addressed by its offset; 0 is none. */
typedef uint64_t ExtismHandle;

#define EXTISM_EXPORTED_FUNCTION(name) \
  __attribute__((export_name(#name))) name(void)

#define EXTISM_ENV_IMPORT(name) \
  __attribute__((import_module("extism:host/env"), import_name(name)))

EXTISM_ENV_IMPORT("input_length") extern uint64_t extism_input_length(void);
EXTISM_ENV_IMPORT("input_offset") extern ExtismHandle extism_input_offset(void);
EXTISM_ENV_IMPORT("alloc") extern ExtismHandle extism_alloc(const uint64_t n);
EXTISM_ENV_IMPORT("length_unsafe") extern uint64_t extism_length(const ExtismHandle h);
EXTISM_ENV_IMPORT("error_set") extern void extism_error_set(const ExtismHandle h);
EXTISM_ENV_IMPORT("config_get") extern ExtismHandle extism_config_get(const ExtismHandle key);
EXTISM_ENV_IMPORT("log_info") extern void extism_log_info(const ExtismHandle h);
EXTISM_ENV_IMPORT("load_u8") extern uint8_t extism_abi_load_u8(const uint64_t at);
EXTISM_ENV_IMPORT("store_u8") extern void extism_abi_store_u8(const uint64_t at, const uint8_t b);
EXTISM_ENV_IMPORT("output_set") extern void extism_abi_output_set(const uint64_t at, const uint64_t n);

/* Copies n bytes at offset off of block h into dest; false past its end. */
static inline bool extism_load_from_handle(const ExtismHandle h, const uint64_t off, void *dest,
                                           const size_t n) {
  if (off + n > extism_length(h)) {
    return false;
  }
  uint8_t *d = dest;
  for (size_t i = 0; i < n; i++) {
    d[i] = extism_abi_load_u8(h + off + i);
  }
  return true;
}

/* Copies n bytes of this call's input, from offset off, into dest. */
static inline bool extism_load_input(const uint64_t off, void *dest, const size_t n) {
  return extism_load_from_handle(extism_input_offset(), off, dest, n);
}

/* Copies n bytes from src into block h at offset off; false past its end. */
static inline bool extism_store_to_handle(ExtismHandle h, const uint64_t off, const void *src,
                                          const size_t n) {
  if (off + n > extism_length(h)) {
    return false;
  }
  const uint8_t *s = src;
  for (size_t i = 0; i < n; i++) {
    extism_abi_store_u8(h + off + i, s[i]);
  }
  return true;
}

/* A new block holding a copy of n bytes of src. */
static inline ExtismHandle extism_alloc_buf(const void *src, const size_t n) {
  ExtismHandle h = extism_alloc(n);
  extism_store_to_handle(h, 0, src, n);
  return h;
}

/* Sets the call's output to n bytes of block h from offset off. */
static inline bool extism_output_set_from_handle(const ExtismHandle h, const uint64_t off,
                                                 const uint64_t n) {
  if (off + n > extism_length(h)) {
    return false;
  }
  extism_abi_output_set(h + off, n);
  return true;
}

/* Sets the call's output to a copy of n bytes of src. */
static inline void extism_output_buf(const void *src, const size_t n) {
  ExtismHandle h = extism_alloc_buf(src, n);
  extism_output_set_from_handle(h, 0, n);
}

#endif
