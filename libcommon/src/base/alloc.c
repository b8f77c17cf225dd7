/* alloc.c - abort-on-OOM allocation wrappers (see alloc.h for the policy). */
#include "cm/alloc.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
    fprintf(stderr, "{\"level\":\"fatal\",\"msg\":\"out of memory allocating %zu bytes\"}\n", n);
    abort();
}

void *cm_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        oom(n);
    return p;
}

void *cm_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (p == NULL)
        oom(count * size);
    return p;
}

void *cm_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (q == NULL)
        oom(n);
    return q;
}

char *cm_xstrdup(const char *s)
{
    return cm_xmemdup(s, strlen(s));
}

char *cm_xmemdup(const void *p, size_t n)
{
    char *q = cm_xmalloc(n + 1);
    if (n)
        memcpy(q, p, n);
    q[n] = '\0';
    return q;
}

void cm_alloc_tune_for_server(void)
{
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
    mallopt(M_TOP_PAD, 16 * 1024 * 1024);
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
}
