/* client_ip.c - see client_ip.h. */
#include "cm/client_ip.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "cm/common.h"

bool cm_ip_parse(const char *p, size_t len, cm_ip_addr_t *a)
{
    char tmp[CM_IP_BUFLEN];
    if (!p || len == 0 || len >= sizeof(tmp) || memchr(p, '\0', len))
        return false;
    memcpy(tmp, p, len);
    tmp[len] = '\0';
    memset(a, 0, sizeof(*a));
    if (inet_pton(AF_INET, tmp, &a->v4.sin_addr) == 1) {
        a->v4.sin_family = AF_INET;
        return true;
    }
    if (inet_pton(AF_INET6, tmp, &a->v6.sin6_addr) == 1) {
        a->v6.sin6_family = AF_INET6;
        return true;
    }
    return false;
}

bool cm_ip_format(const cm_ip_addr_t *a, char *buf, size_t n)
{
    const void *bytes =
        a->sa.sa_family == AF_INET ? (const void *)&a->v4.sin_addr : (const void *)&a->v6.sin6_addr;
    socklen_t len = (socklen_t)CM_MIN(n, (size_t)INT32_MAX);
    return buf && inet_ntop(a->sa.sa_family, bytes, buf, len) != NULL;
}

/*
 * Removes a port the way PostHog's extract_client_ip does: "[v6]:port" or
 * "[v6]" keeps what is inside the brackets; text with a '.' whose last ':'
 * comes after its last '.' is "v4:port"; anything else (plain IPv6, where
 * colons belong to the address) is left alone.
 */
static cm_slice_t strip_port(cm_slice_t s)
{
    if (s.len > 0 && s.p[0] == '[') {
        const char *close = memchr(s.p, ']', s.len);
        size_t end = close ? (size_t)(close - s.p) : s.len;
        return (cm_slice_t){s.p + 1, end - 1};
    }
    size_t dot = s.len, colon = s.len;
    for (size_t i = 0; i < s.len; i++) {
        if (s.p[i] == '.')
            dot = i;
        else if (s.p[i] == ':')
            colon = i;
    }
    if (dot < s.len && colon < s.len && colon > dot)
        return (cm_slice_t){s.p, colon};
    return s;
}

/* The entry of a comma-separated list that starts at *pos; advances *pos. */
static cm_slice_t next_entry(cm_slice_t list, size_t *pos)
{
    const char *start = list.p + *pos;
    size_t left = list.len - *pos;
    const char *comma = memchr(start, ',', left);
    size_t len = comma ? (size_t)(comma - start) : left;
    *pos += len + (comma ? 1 : 0);
    return cm_slice_trim((cm_slice_t){start, len});
}

/* The entry as an address (port removed) in buf, or peer. */
static const char *entry_or_peer(cm_slice_t e, const char *peer, char *buf, size_t n)
{
    cm_ip_addr_t a;
    cm_slice_t bare = strip_port(e);
    if (cm_ip_parse(bare.p, bare.len, &a))
        return cm_ip_format(&a, buf, n) ? buf : peer;
    return peer;
}

/* Every hop trusted: PostHog's reading (see the header). */
static const char *trust_all(cm_slice_t xff, const char *peer, char *buf, size_t n)
{
    cm_ip_addr_t a;
    size_t pos = 0;
    cm_slice_t first = next_entry(xff, &pos);
    cm_slice_t bare = strip_port(first);
    if (cm_ip_parse(bare.p, bare.len, &a))
        return cm_ip_format(&a, buf, n) ? buf : peer;
    /* Fallback: the leftmost entry that is a literal as written. */
    for (pos = 0; pos < xff.len;) {
        cm_slice_t e = next_entry(xff, &pos);
        if (cm_ip_parse(e.p, e.len, &a))
            return cm_ip_format(&a, buf, n) ? buf : peer;
    }
    return peer;
}

const char *cm_client_ip(cm_slice_t xff, const char *peer, int trusted, char *buf, size_t n)
{
    if (trusted == 0 || !xff.p || xff.len == 0)
        return peer;
    if (trusted < 0)
        return trust_all(xff, peer, buf, n);
    size_t count = 0, pos = 0;
    while (pos < xff.len) {
        next_entry(xff, &pos);
        count++;
    }
    size_t want = count > (size_t)trusted ? count - (size_t)trusted : 0;
    cm_slice_t e = CM_SLICE_NULL;
    pos = 0;
    for (size_t i = 0; i <= want; i++)
        e = next_entry(xff, &pos);
    return entry_or_peer(e, peer, buf, n);
}
