/*
 * text.h - UTF-8 text helpers with JavaScript's rules.
 *
 * The flag matchers must agree with posthog-node, whose strings are UTF-16
 * JavaScript strings: case folding is String.prototype.toLowerCase (full
 * Unicode, for `exact`) or ASCII-only (for `icontains` and friends, as the
 * flags service does), ordering is by UTF-16 code unit, and "whitespace" is
 * ECMAScript's WhiteSpace + LineTerminator set. All functions accept any
 * bytes; a byte that is not part of valid UTF-8 is passed through as is.
 */
#ifndef FLG_TEXT_H
#define FLG_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm/buf.h"

/*
 * Decodes one code point at s[*i] and advances *i. Invalid UTF-8 yields the
 * byte value itself (0x80..0xFF) and advances by one.
 */
uint32_t flg_utf8_next(cm_slice_t s, size_t *i);
void flg_utf8_put(cm_buf_t *out, uint32_t cp);

/* Appends s with A-Z folded to a-z; nothing else changes. */
void flg_lower_ascii(cm_slice_t s, cm_buf_t *out);
/* Appends String.prototype.toLowerCase(s) (simple mappings, U+0130 and final sigma). */
void flg_lower_unicode(cm_slice_t s, cm_buf_t *out);
/* The single-code-point lowercase mapping (identity when there is none). */
uint32_t flg_lower_cp(uint32_t cp);

/* JavaScript's `a < b` on strings: UTF-16 code unit order. <0, 0, >0. */
int flg_js_strcmp(cm_slice_t a, cm_slice_t b);

/* ECMAScript WhiteSpace or LineTerminator (what String.prototype.trim strips). */
bool flg_js_is_space(uint32_t cp);
cm_slice_t flg_js_trim(cm_slice_t s);
cm_slice_t flg_js_trim_start(cm_slice_t s);

bool flg_is_ascii_without_cr(cm_slice_t s);
bool flg_slice_contains(cm_slice_t hay, cm_slice_t needle);

#endif
