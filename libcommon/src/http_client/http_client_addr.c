/*
 * http_client_addr.c - cm_http_client_public_only, the address filter for
 * URLs that come from outside (see http_client.h).
 *
 * The client calls the filter on every address a name resolved to, right
 * before connecting to it, so a name that resolves to a public address for
 * the check and to a private one for the connection (DNS rebinding) gains
 * nothing. What is refused is listed below; IPv6 forms that carry an IPv4
 * address (mapped, compatible, NAT64, 6to4) are judged by that address,
 * since the packets may end up there.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "cm/common.h"
#include "cm/http_client.h"

typedef struct {
    uint32_t net;
    unsigned bits;
} v4_net_t;

static bool ipv4_public(uint32_t a) /* host byte order */
{
    static const v4_net_t refused[] = {
        {0x00000000, 8},  /* 0/8 "this network", 0.0.0.0 unspecified */
        {0x0a000000, 8},  /* 10/8 private */
        {0x64400000, 10}, /* 100.64/10 carrier-grade NAT */
        {0x7f000000, 8},  /* 127/8 loopback */
        {0xa9fe0000, 16}, /* 169.254/16 link-local (cloud metadata lives here) */
        {0xac100000, 12}, /* 172.16/12 private */
        {0xc0000000, 24}, /* 192.0.0/24 IETF protocol assignments */
        {0xc0a80000, 16}, /* 192.168/16 private */
        {0xc6120000, 15}, /* 198.18/15 benchmarking */
        {0xe0000000, 4},  /* 224/4 multicast */
        {0xf0000000, 4},  /* 240/4 reserved, 255.255.255.255 broadcast */
    };
    for (size_t i = 0; i < CM_ARRAY_LEN(refused); i++)
        if ((a >> (32 - refused[i].bits)) == (refused[i].net >> (32 - refused[i].bits)))
            return false;
    return true;
}

static uint32_t v4_at(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static bool all_zero(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != 0)
            return false;
    return true;
}

static bool ipv6_public(const uint8_t *b)
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};

    if (memcmp(b, mapped, 12) == 0 || memcmp(b, nat64, 12) == 0)
        return ipv4_public(v4_at(b + 12));
    if (all_zero(b, 12))
        return false; /* ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d */
    if (b[0] == 0x20 && b[1] == 0x02)
        return ipv4_public(v4_at(b + 2)); /* 6to4 2002:aabb:ccdd::/48 */
    if ((b[0] & 0xfe) == 0xfc)
        return false; /* fc00::/7 unique local */
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
        return false; /* fe80::/10 link-local */
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
        return false; /* fec0::/10 site-local (deprecated, still routed inside some sites) */
    if (b[0] == 0xff)
        return false; /* ff00::/8 multicast */
    if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0 && b[5] == 1)
        return false; /* 64:ff9b:1::/48 local-use NAT64 */
    if (b[0] == 0x01 && all_zero(b + 1, 7))
        return false; /* 100::/64 discard-only */
    return true;
}

bool cm_http_client_public_only(const struct sockaddr *addr, void *ud)
{
    CM_UNUSED(ud);
    if (addr == NULL)
        return false;
    if (addr->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)(const void *)addr;
        return ipv4_public(ntohl(a->sin_addr.s_addr));
    }
    if (addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)(const void *)addr;
        return ipv6_public(a->sin6_addr.s6_addr);
    }
    return false;
}
