/*
 * alloc.h - allocation that never returns NULL.
 *
 * Policy (decided once, h2o/redis style): running out of memory is fatal.
 * Every cm_x* function logs to stderr and aborts instead of returning NULL,
 * so the rest of the code carries no unreachable NULL checks.
 */
#ifndef CM_ALLOC_H
#define CM_ALLOC_H

#include <stddef.h>

void *cm_xmalloc(size_t n);
void *cm_xcalloc(size_t count, size_t size);
void *cm_xrealloc(void *p, size_t n);
char *cm_xstrdup(const char *s);
/* Copies n bytes and appends a NUL, so the copy is also a C string. */
char *cm_xmemdup(const void *p, size_t n);

#endif
