/*
 * config.h - configuration from environment variables, declared in one table.
 *
 * Each service declares a table of cm_cfg_key_t rows (name, type, where the
 * value goes via offsetof, default as text, bounds, help). One call parses the
 * environment against the table; the same table prints the effective config
 * (--print-config) and the documentation check in scripts/ reads the names.
 * Unknown variables are ignored; a malformed value is an error naming the key.
 * An empty variable counts as unset and takes the default. A row may name an
 * earlier spelling (old_env), read only when the current name is unset: the
 * current name wins when both are set.
 *
 * Types and their C fields:
 *   CM_CFG_STR       char *           (owned by the target; freed by cm_config_free)
 *   CM_CFG_INT       long long        (min/max enforced)
 *   CM_CFG_BOOL      bool             ("1/0, true/false, yes/no, on/off", any case)
 *   CM_CFG_SIZE      size_t           (bytes; suffixes k, m, g / KiB, MiB, GiB; min/max)
 *   CM_CFG_DURATION  long long ms     (suffixes ms, s, m, h; bare number = ms; min/max)
 */
#ifndef CM_CONFIG_H
#define CM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum { CM_CFG_STR, CM_CFG_INT, CM_CFG_BOOL, CM_CFG_SIZE, CM_CFG_DURATION } cm_cfg_type_t;

typedef struct {
    const char *env; /* environment variable name */
    cm_cfg_type_t type;
    size_t offset;       /* offsetof(target struct, field) */
    const char *def;     /* default, as it would be written in the environment; NULL = unset */
    long long min, max;  /* bounds for INT/SIZE/DURATION; min == max == 0 means unbounded */
    const char *help;    /* one line, shown by --print-config and in the docs */
    unsigned flags;      /* CM_CFG_SECRET: value masked when printed */
    const char *old_env; /* an earlier spelling, still read when env is unset; NULL: none */
} cm_cfg_key_t;

#define CM_CFG_SECRET 1u

/*
 * Fills target from getenv() (or the default) for every row. On error returns
 * CM_EINVAL and writes "KEY: reason" into err. Strings already in target are
 * not freed: call on a zeroed struct.
 */
int cm_config_load(const cm_cfg_key_t *keys, size_t nkeys, void *target, char *err, size_t errlen);
/* Same, but reads values through lookup(name) instead of getenv (tests). */
int cm_config_load_with(const cm_cfg_key_t *keys, size_t nkeys, void *target,
                        const char *(*lookup)(const char *name, void *ud), void *ud, char *err,
                        size_t errlen);
/* Prints "NAME=value  # help (default: x)" lines, secrets masked. */
void cm_config_print(const cm_cfg_key_t *keys, size_t nkeys, const void *target, FILE *out);
/* Frees the CM_CFG_STR fields. */
void cm_config_free(const cm_cfg_key_t *keys, size_t nkeys, void *target);

/* Parsers used by the loader, exposed for reuse and tests. Return 0 or CM_EINVAL. */
/* A comma-separated list ("a=1,b=2", KAFKA_*_PROPERTIES) split in place:
 * copy's commas become NULs, out gets its non-empty items (at most max);
 * their count. */
size_t cm_config_split_list(char *copy, const char **out, size_t max);
int cm_parse_bool(const char *s, bool *out);
int cm_parse_size(const char *s, size_t *out);
int cm_parse_duration_ms(const char *s, long long *out);

#endif
