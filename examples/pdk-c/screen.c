/*
 * screen: a viewer_message hook written in C for LiveHAT. It denies a
 * message that carries a link or asks viewers to move to a messenger, and
 * allows the rest. Build and try it as examples/pdk-c/README.md says.
 */
#include "extism-abi.h"

/* Bigger inputs are refused: a viewer message is short. */
#define MAX_INPUT 8192

static uint8_t input[MAX_INPUT];

/*
 * What a message must not contain, ASCII letters matched in any case.
 * A static constructor fills it: clang runs constructors from
 * __wasm_call_ctors, which the host calls once per instance (export it
 * with -Wl,--export=__wasm_call_ctors when there is no libc to call it).
 */
static const char *banned[8];
static int nbanned;

__attribute__((constructor)) static void load_banned(void) {
  static const char *const words[] = {"http://", "https://", "www.", "weixin", "vx", "微信", "加v"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    banned[nbanned++] = words[i];
  }
}

static uint8_t lower(uint8_t c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

static size_t length(const char *s) {
  size_t n = 0;
  while (s[n]) {
    n++;
  }
  return n;
}

/* Reports whether word occurs in text[0:n], ASCII letters in any case. */
static bool contains(const uint8_t *text, size_t n, const char *word) {
  size_t w = length(word);
  for (size_t i = 0; i + w <= n; i++) {
    size_t j = 0;
    while (j < w && lower(text[i + j]) == lower((uint8_t)word[j])) {
      j++;
    }
    if (j == w) {
      return true;
    }
  }
  return false;
}

/*
 * Finds the "text" string of the host's JSON input (the encoder writes
 * `"text":"…"` with no space) and returns its raw bytes, escapes kept.
 */
static const uint8_t *message(const uint8_t *in, size_t n, size_t *len) {
  static const char key[] = "\"text\":\"";
  size_t k = sizeof key - 1;
  for (size_t i = 0; i + k <= n; i++) {
    size_t j = 0;
    while (j < k && in[i + j] == (uint8_t)key[j]) {
      j++;
    }
    if (j < k) {
      continue;
    }
    size_t start = i + k, end = start;
    while (end < n && in[end] != '"') {
      end += in[end] == '\\' ? 2 : 1;
    }
    *len = (end < n ? end : n) - start;
    return in + start;
  }
  *len = 0;
  return in;
}

static void fail(const char *msg) { extism_error_set(extism_alloc_buf(msg, length(msg))); }

int32_t EXTISM_EXPORTED_FUNCTION(screen) {
  uint64_t n = extism_input_length();
  if (n > MAX_INPUT) {
    fail("screen: the input is over 8 KiB");
    return 1;
  }
  if (!extism_load_input(0, input, n)) {
    fail("screen: cannot read the input");
    return 1;
  }
  size_t textLen;
  const uint8_t *text = message(input, n, &textLen);
  for (int i = 0; i < nbanned; i++) {
    if (!contains(text, textLen, banned[i])) {
      continue;
    }
    /* The reason is the manifest's config "reason"; it is a JSON string. */
    static const char key[] = "reason";
    ExtismHandle reason = extism_config_get(extism_alloc_buf(key, sizeof key - 1));
    static uint8_t out[512];
    static const char head[] = "{\"action\":\"deny\",\"reason\":\"";
    size_t o = sizeof head - 1;
    for (size_t j = 0; j < o; j++) {
      out[j] = (uint8_t)head[j];
    }
    uint64_t r = reason ? extism_length(reason) : 0;
    if (r == 0 || r > sizeof out - o - 2 || !extism_load_from_handle(reason, 0, out + o, r)) {
      static const char fallback[] = "link or contact handle";
      r = sizeof fallback - 1;
      for (size_t j = 0; j < r; j++) {
        out[o + j] = (uint8_t)fallback[j];
      }
    }
    o += r;
    out[o++] = '"';
    out[o++] = '}';
    static const char note[] = "screen: denied a message with a link or contact handle";
    extism_log_info(extism_alloc_buf(note, sizeof note - 1));
    extism_output_buf(out, o);
    return 0;
  }
  static const char allow[] = "{\"action\":\"allow\"}";
  extism_output_buf(allow, sizeof allow - 1);
  return 0;
}
