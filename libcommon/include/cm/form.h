/*
 * form.h - application/x-www-form-urlencoded bodies and query strings.
 *
 * A form is `name=value` pairs separated by '&' (only '&': ';' is data).
 * Names and values are percent-encoded with '+' standing for a space.
 * Old posthog-js builds post `data=<payload>&compression=...` this way, and
 * GET capture carries the same fields in the query string. Decoding never
 * produces more bytes than it reads, so the input length is the bound.
 */
#ifndef CM_FORM_H
#define CM_FORM_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/buf.h"
#include "cm/err.h" /* the CM_E* codes these functions return */

/* Walks the pairs of a form without copying or decoding anything. */
typedef struct {
    const char *p; /* next unread byte */
    const char *end;
} cm_form_iter_t;

void cm_form_iter_init(cm_form_iter_t *it, const char *p, size_t len);

/*
 * Yields the next pair as raw (still encoded) slices and returns true, or
 * returns false at the end. Empty pairs ("a=1&&b=2") are skipped; a pair
 * without '=' has an empty value.
 */
bool cm_form_next(cm_form_iter_t *it, cm_slice_t *name, cm_slice_t *value);

/*
 * Percent-decodes one component and appends it to out; with plus_is_space
 * (form and query fields) '+' becomes ' '. Returns 0 or CM_EINVAL for a
 * '%' not followed by two hex digits (out->len is then restored).
 */
int cm_url_decode(const char *p, size_t len, bool plus_is_space, cm_buf_t *out);

/*
 * Finds the first field whose decoded name equals `name` and appends its
 * decoded value to out. Returns 0, CM_ENOTFOUND, or CM_EINVAL when a bad
 * escape is met in a name compared on the way or in the value. On 0, out is
 * NUL-terminated (out->p is never NULL, even for an empty value).
 */
int cm_form_get(const char *p, size_t len, const char *name, cm_buf_t *out);

/* Appends p percent-encoded for a query component: every byte but RFC
 * 3986's unreserved ones (A-Z a-z 0-9 - . _ ~) becomes %XX. */
void cm_url_encode(const char *p, size_t len, cm_buf_t *out);

#endif
