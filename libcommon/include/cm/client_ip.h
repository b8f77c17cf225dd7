/*
 * client_ip.h - which address a request comes from, one policy for every
 * service: how many proxies in front of it are trusted to have written
 * X-Forwarded-For honestly (docs/configuration.md, TRUSTED_PROXIES).
 *
 *   trusted == 0    the TCP peer; the header is ignored (a client can write
 *                   anything into it)
 *   trusted == N    the address the outermost trusted proxy saw: the Nth
 *                   entry from the right (each proxy appends its peer), or
 *                   the leftmost when the list is shorter
 *   trusted == CM_TRUST_ALL_PROXIES
 *                   every hop is trusted, as PostHog's flags service reads
 *                   the header: the first entry; else the leftmost entry
 *                   that is an address as it stands; else the peer
 *
 * Entries are trimmed and a port is removed ("1.2.3.4:5678",
 * "[2001:db8::1]:443"; Azure's gateway adds them). An entry that is not then
 * an IPv4/IPv6 literal is not an address: the peer is used instead.
 */
#ifndef CM_CLIENT_IP_H
#define CM_CLIENT_IP_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "cm/buf.h"

#define CM_TRUST_ALL_PROXIES (-1)
#define CM_IP_BUFLEN         46 /* INET6_ADDRSTRLEN */

/* An address literal parsed into the sockaddr that C APIs want. */
typedef union {
    struct sockaddr sa;
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
} cm_ip_addr_t;

/* Parses an IPv4 or IPv6 literal (exactly len bytes, no port). */
bool cm_ip_parse(const char *p, size_t len, cm_ip_addr_t *a);
/* Canonical text of a into buf ("2001:DB8::0001" -> "2001:db8::1"); false if it does not fit. */
bool cm_ip_format(const cm_ip_addr_t *a, char *buf, size_t n);

/*
 * The client address under the policy above. xff is the header's value
 * (several header lines joined with ","), or an empty/NULL slice. An address
 * from the header is written in canonical form into buf (CM_IP_BUFLEN bytes)
 * and buf is returned; otherwise peer itself (which may be NULL).
 */
const char *cm_client_ip(cm_slice_t xff, const char *peer, int trusted, char *buf, size_t n);

#endif
