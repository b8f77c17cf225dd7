/*
 * regex.h - the `regex` / `not_regex` operators: PCRE2 with match limits,
 * plus the rules posthog-node uses to decide whether it can match locally.
 *
 * posthog-node only evaluates an ASCII "portable" subset of patterns itself
 * (JavaScript and the Rust service's regex crate agree on it) and defers
 * anything else to the server; it also defers subjects holding non-ASCII
 * characters or a carriage return. A pattern JavaScript rejects makes both
 * operators false. The analysis below reproduces those decisions, so a
 * caller knows when the posthog-node answer exists and must be matched.
 *
 * Matching itself is PCRE2 compiled with UTF + UCP, '$' only at the very
 * end and LF as the only newline, which gives JavaScript's and Rust's
 * answers on the portable subset. "\v" is rewritten to "\x0b" first (PCRE2
 * reads it as "any vertical space"). Every match runs under a match limit
 * and a heap limit; hitting one is reported, never a crash or a stall.
 * The compiled pattern is immutable and may be shared between threads.
 */
#ifndef FLG_REGEX_H
#define FLG_REGEX_H

#include <stdbool.h>

#include <stdint.h>

#include "cm/buf.h"

#define FLG_REGEX_MATCH_LIMIT    500000u /* PCRE2 backtracking steps per match */
#define FLG_REGEX_HEAP_LIMIT_KIB 2048u
#define FLG_REGEX_MAX_PATTERN    16384u

typedef struct flg_regex flg_regex_t;

/* The regex time one evaluation may spend, shared by all its matches: a
 * client who holds only the public token chooses the subjects, and a
 * pattern with catastrophic backtracking costs milliseconds per match even
 * under the per-match limit. Once spent, the remaining regex conditions
 * are not run and count as errors (the flag is left out and
 * errorsWhileComputingFlags is set, as for a match over its limit). */
typedef struct {
    uint64_t limit_ns; /* 0: no budget */
    uint64_t spent_ns;
    bool exhausted; /* a regex condition was refused for want of budget */
} flg_rx_budget_t;

typedef enum {
    FLG_RX_NOMATCH = 0,
    FLG_RX_MATCH,
    FLG_RX_INVALID, /* the engine rejects the pattern: regex and not_regex are both false */
    FLG_RX_DEFER,   /* posthog-node would not decide (only from flg_regex_test_node) */
    FLG_RX_LIMIT    /* a match limit was hit, or no engine can run the pattern */
} flg_rx_result_t;

flg_regex_t *flg_regex_new(cm_slice_t pattern);
void flg_regex_free(flg_regex_t *re);

/* posthog-node's decision for this pattern and String(value). budget (may
 * be NULL) is charged for the time the match takes; once it is spent, no
 * match runs and the answer is FLG_RX_LIMIT (budget->exhausted is set). */
flg_rx_result_t flg_regex_test_node(const flg_regex_t *re, cm_slice_t subject,
                                    flg_rx_budget_t *budget);
/* The server's: an unanchored search, invalid pattern => FLG_RX_INVALID. */
flg_rx_result_t flg_regex_test_server(const flg_regex_t *re, cm_slice_t subject,
                                      flg_rx_budget_t *budget);

#endif
