/*
 * common.h - tiny macros shared by every libcommon module and service.
 *
 * No externs live here; this header only defines helpers that cost nothing
 * at run time (container_of, array length, branch hints).
 */
#ifndef CM_COMMON_H
#define CM_COMMON_H

#include <stddef.h>

#define CM_CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

#define CM_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define CM_LIKELY(x)   __builtin_expect(!!(x), 1)
#define CM_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define CM_UNUSED(x) ((void)(x))

#define CM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CM_MAX(a, b) ((a) > (b) ? (a) : (b))

/* The value of one hex digit (either case), or -1. */
static inline int cm_hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20; /* ASCII lower case */
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

#endif
