/*
 * jsconv.h - how JavaScript (posthog-node) and the Rust flags service turn
 * JSON values into strings and numbers.
 *
 * The two disagree on numbers: JavaScript has one Number type (1.0 is 1,
 * 1e21 prints as "1e+21"), serde_json keeps integers and floats apart (1.0
 * prints as "1.0"). Every matcher picks one of these explicitly:
 *   FLG_STR_JS      String(value) / JSON.stringify rules of posthog-node
 *   FLG_STR_SERVER  to_string_representation of the Rust service
 */
#ifndef FLG_JSCONV_H
#define FLG_JSCONV_H

#include <stdbool.h>

#include "cm/buf.h"
#include "cm/json.h"

/* A JSON number as a double; overflow gives +-Infinity like JSON.parse. */
double flg_js_number(cm_json_t v);
/* Number.prototype.toString(): shortest round-trip digits, JS layout. */
void flg_js_number_str(double d, cm_buf_t *out);
/* Number.isInteger for a JSON number (false for non-numbers). */
bool flg_js_is_integer(cm_json_t v);

/* String(value): strings decoded, arrays joined with ",", objects "[object Object]". */
void flg_js_string(cm_json_t v, cm_buf_t *out);
/* parseFloat(s): longest decimal prefix after leading whitespace, else NaN. */
double flg_js_parse_float(cm_slice_t s);

/*
 * The text `exact` compares. JS mode follows posthog-node's exactMatchString:
 * strings raw, anything else canonical JSON (sorted keys, JSON.stringify
 * escaping); returns false when the value holds a whole number or a
 * non-finite one, which posthog-node refuses to stringify (it cannot tell
 * 1 from 1.0). SERVER mode always succeeds: serde_json's text.
 */
typedef enum { FLG_STR_JS, FLG_STR_SERVER } flg_str_style_t;
bool flg_exact_string(cm_json_t v, flg_str_style_t style, cm_buf_t *out);

/* Rust's str::parse::<f64>: the whole string, no spaces, inf/nan allowed. */
bool flg_server_parse_f64(cm_slice_t s, double *out);

/* JSON-representable in JS terms: no number overflowed to Infinity. */
bool flg_js_finite_everywhere(cm_json_t v);

/* Boolean coercion shared by both implementations for `exact`. */
bool flg_truthy_or_falsy(cm_json_t v); /* bool, "true"/"false" (ci), arrays of those */
bool flg_truthy(cm_json_t v);          /* true, "true" (ci), arrays of all-truthy */

#endif
