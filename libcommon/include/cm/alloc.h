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

/*
 * Tunes glibc malloc for a request server; call once at start-up. By
 * default glibc gives memory freed at the top of the heap back to the
 * kernel (above 128 KiB) and serves large blocks with mmap, so a server
 * whose every request allocates and frees a few hundred KiB pays page
 * faults and page clearing on every request (measured: 40 % of the flags
 * service's time). Raising the trim and mmap thresholds keeps that memory
 * in the process: resident memory stays at its peak instead.
 */
void cm_alloc_tune_for_server(void);

#endif
