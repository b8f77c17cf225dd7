/*
 * limits.c - how many new OAuth apps (client documents seen for the first
 * time) may be provisioned: per client address per minute and per hour,
 * and overall per hour; an app linked to an organization by its
 * verification token counts against higher limits. Every fetch
 * of a new app's document counts, whatever comes of it: a failure costs the
 * fetcher as much as a success (a never-answering host most of all). The
 * numbers are in docs/oauth.md. Counted in this process (fixed windows): several
 * api processes each allow as much.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/client_ip.h"
#include "cm/timefmt.h"
#include "oauth/oauth_int.h"

static const struct {
    int per_ip_minute, per_ip_hour, overall_hour;
} LIMITS[2] = {
    {5, 10, 100},    /* not linked */
    {20, 100, 1000}, /* linked to an organization */
};

typedef struct {
    char ip[CM_IP_BUFLEN];
    int64_t minute, hour; /* window starts */
    int in_minute[2], in_hour[2];
} ip_count_t;

struct oauth_limits {
    ip_count_t *ips;
    size_t n, cap;
    int64_t hour;
    int in_hour[2];
};

static int64_t now_s(void)
{
    return (int64_t)(cm_now_us() / 1000000);
}

static ip_count_t *count_of(oauth_limits_t *l, const char *ip, int64_t now)
{
    /* forget addresses whose hour is over: the list never outgrows an hour */
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++)
        if (now - l->ips[i].hour < 3600)
            l->ips[k++] = l->ips[i];
    l->n = k;
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->ips[i].ip, ip) == 0)
            return &l->ips[i];
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->ips = cm_xrealloc(l->ips, l->cap * sizeof(*l->ips));
    }
    ip_count_t *c = &l->ips[l->n++];
    memset(c, 0, sizeof(*c));
    snprintf(c->ip, sizeof(c->ip), "%s", ip);
    c->minute = c->hour = now;
    return c;
}

static void roll(oauth_limits_t *l, ip_count_t *c, int64_t now)
{
    if (now - c->minute >= 60) {
        c->minute = now;
        c->in_minute[0] = c->in_minute[1] = 0;
    }
    if (now - c->hour >= 3600) {
        c->hour = now;
        c->in_hour[0] = c->in_hour[1] = 0;
    }
    if (now - l->hour >= 3600) {
        l->hour = now;
        l->in_hour[0] = l->in_hour[1] = 0;
    }
}

static bool under(const oauth_limits_t *l, const ip_count_t *c, int linked)
{
    /* linked and unlinked apps each have their own budget */
    return c->in_minute[linked] < LIMITS[linked].per_ip_minute &&
           c->in_hour[linked] < LIMITS[linked].per_ip_hour &&
           l->in_hour[linked] < LIMITS[linked].overall_hour;
}

int api_oauth__limits_check(api_oauth_t *o, const char *ip)
{
    if (o->limits == NULL)
        o->limits = cm_xcalloc(1, sizeof(*o->limits));
    int64_t now = now_s();
    ip_count_t *c = count_of(o->limits, ip, now);
    roll(o->limits, c, now);
    if (under(o->limits, c, 0))
        return API_OAUTH_NEW_APP_OK;
    return under(o->limits, c, 1) ? API_OAUTH_NEW_APP_LINKED_ONLY : API_OAUTH_NEW_APP_REFUSED;
}

void api_oauth__limits_count(api_oauth_t *o, const char *ip, bool linked)
{
    if (o->limits == NULL)
        o->limits = cm_xcalloc(1, sizeof(*o->limits));
    int64_t now = now_s();
    ip_count_t *c = count_of(o->limits, ip, now);
    roll(o->limits, c, now);
    c->in_minute[linked]++;
    c->in_hour[linked]++;
    o->limits->in_hour[linked]++;
}

void api_oauth__limits_relink(api_oauth_t *o, const char *ip)
{
    if (o->limits == NULL)
        return;
    int64_t now = now_s();
    ip_count_t *c = count_of(o->limits, ip, now);
    roll(o->limits, c, now);
    /* a window that began since the fetch started has nothing to move */
    if (c->in_minute[0] > 0) {
        c->in_minute[0]--;
        c->in_minute[1]++;
    }
    if (c->in_hour[0] > 0) {
        c->in_hour[0]--;
        c->in_hour[1]++;
    }
    if (o->limits->in_hour[0] > 0) {
        o->limits->in_hour[0]--;
        o->limits->in_hour[1]++;
    }
}

void api_oauth__limits_free(api_oauth_t *o)
{
    if (o->limits)
        free(o->limits->ips);
    free(o->limits);
    o->limits = NULL;
}
