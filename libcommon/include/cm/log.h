/*
 * log.h - structured JSON log lines.
 *
 * One line per call on stderr, written with a single write(2) so lines from
 * several processes sharing a terminal do not interleave:
 *   {"ts":"2026-11-21T12:00:00.123Z","level":"info","service":"ingest",
 *    "request_id":"...","msg":"...", <extra fields>}
 * The level is checked before anything is formatted (redis serverLog style).
 * Loop-thread only: the formatting buffer is static.
 * A line never exceeds CM_LOG_LINE_MAX bytes (newline included); longer
 * content is cut at a character boundary, the line stays valid JSON and
 * gets "truncated":true as its last field.
 */
#ifndef CM_LOG_H
#define CM_LOG_H

#include <stdbool.h>
#include <stdint.h>

#define CM_LOG_LINE_MAX 8192

typedef enum {
    CM_LOG_DEBUG = 0,
    CM_LOG_INFO = 1,
    CM_LOG_WARN = 2,
    CM_LOG_ERROR = 3,
    CM_LOG_OFF = 4
} cm_log_level_t;

/* Extra key/value pairs; a NULL value is written as JSON null. */
typedef struct {
    const char *key;
    const char *value;
} cm_log_field_t;

extern cm_log_level_t cm_log_min_level;

/* service: the name put in every line (copied). */
void cm_log_init(const char *service, cm_log_level_t min_level);
/* "debug", "info", "warn"/"warning", "error", "off"; returns 0 or CM_EINVAL. */
int cm_log_level_parse(const char *s, cm_log_level_t *out);
/* Redirects output to fd (tests); -1 restores stderr. */
void cm_log_set_fd(int fd);

#define cm_log(level, request_id, ...)                                                             \
    do {                                                                                           \
        if ((level) >= cm_log_min_level)                                                           \
            cm__log_write((level), (request_id), NULL, 0, __VA_ARGS__);                            \
    } while (0)

#define cm_log_fields(level, request_id, fields, nfields, ...)                                     \
    do {                                                                                           \
        if ((level) >= cm_log_min_level)                                                           \
            cm__log_write((level), (request_id), (fields), (nfields), __VA_ARGS__);                \
    } while (0)

/*
 * The same with numeric fields as well: nums[i].value is a number's text
 * ("200", "1.25"), written unquoted so a log query can compare it; text
 * that is not a JSON number is written as null. Access lines use it.
 */
#define cm_log_record(level, request_id, fields, nfields, nums, nnums, ...)                        \
    do {                                                                                           \
        if ((level) >= cm_log_min_level)                                                           \
            cm__log_write_ex((level), (request_id), (fields), (nfields), (nums), (nnums),          \
                             __VA_ARGS__);                                                         \
    } while (0)

/*
 * A recurring line (every refused request of an outage, say) is written at
 * most once per interval, with the count of those held back since:
 *
 *     uint64_t skipped;
 *     if (cm_log_limit(&ctx->refusals, uv_now(loop), 1000, &skipped))
 *         cm_log(CM_LOG_WARN, id, "refused (%llu more since the last line)", skipped);
 */
typedef struct {
    uint64_t last_ms;
    uint64_t skipped;
    bool logged; /* a line was written: last_ms means something */
} cm_log_limit_t;

bool cm_log_limit(cm_log_limit_t *l, uint64_t now_ms, uint64_t interval_ms, uint64_t *skipped);

void cm__log_write(cm_log_level_t level, const char *request_id, const cm_log_field_t *fields,
                   int nfields, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void cm__log_write_ex(cm_log_level_t level, const char *request_id, const cm_log_field_t *fields,
                      int nfields, const cm_log_field_t *nums, int nnums, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

#endif
