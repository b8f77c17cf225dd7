/*
 * guesses.c - how fast passwords may be guessed at the sign-in page: per
 * account (the email tried, normalised, known or not) and per client
 * address (an IPv6 address by its /64: one host holds a whole /64).
 *
 * After OAUTH_LOGIN_FREE_FAILURES failures of an account (or
 * OAUTH_LOGIN_ADDRESS_FREE_FAILURES of an address) each further attempt
 * waits 1 s after the last one, then 2 s, 4 s ... up to
 * OAUTH_LOGIN_MAX_DELAY: growing delays, never a lockout, so an attacker
 * who stops leaves the user free within that time. An attempt is counted
 * as a failure when it starts (so that a burst sent at once is held back
 * like one sent in turn) and taken back when it succeeds or was no guess.
 * A success clears its account. Counts are forgotten an hour (plus the
 * longest delay) after the last attempt, and each table holds at most
 * MAX_ENTRIES (then an old one goes: make_room). In this process only: several api
 * processes each allow as much (docs/oauth.md).
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/hashfn.h"
#include "cm/timefmt.h"
#include "oauth/oauth_int.h"

#define MAX_ENTRIES  10000
#define FORGET_MS    (3600 * 1000LL)
#define FIRST_MS     1000LL
#define EVICT_SAMPLE 16

typedef struct {
    char key[256]; /* an email (at most 254 bytes) or an address */
    int failures;
    int64_t last_ms; /* monotonic: the last attempt counted */
} guess_t;

typedef struct {
    guess_t *v;
    uint64_t *hash; /* hash[i] of v[i].key: a lookup scans these, not the entries */
    size_t n, cap;
    uint64_t rng;
} table_t;

struct oauth_guesses {
    table_t accounts, addresses;
};

static int64_t now_ms(void)
{
    return (int64_t)cm_mono_ms();
}

static int64_t forget_ms(const api_config_t *cfg)
{
    return FORGET_MS + cfg->login_max_delay_ms;
}

/* How long g must wait still, in ms (0: it may try now). */
static int64_t wait_of(const guess_t *g, long long free_failures, const api_config_t *cfg,
                       int64_t now)
{
    if (g == NULL || g->failures < free_failures)
        return 0;
    long long over = g->failures - free_failures;
    int64_t delay = over >= 30 ? cfg->login_max_delay_ms : FIRST_MS << over;
    if (delay > cfg->login_max_delay_ms)
        delay = cfg->login_max_delay_ms;
    int64_t until = g->last_ms + delay;
    return until > now ? until - now : 0;
}

static guess_t *find(table_t *t, const char *key)
{
    uint64_t h = cm_fnv1a_64(cm_slice_from_cstr(key));
    for (size_t i = 0; i < t->n; i++)
        if (t->hash[i] == h && strcmp(t->v[i].key, key) == 0)
            return &t->v[i];
    return NULL;
}

/* Room for one more when full: the oldest of a few entries drawn at
 * random goes (forgotten ones first, being oldest), in constant time, as
 * a flood of new names keeps the table full. */
static void make_room(table_t *t)
{
    if (t->n == MAX_ENTRIES) {
        size_t oldest = SIZE_MAX;
        for (int k = 0; k < EVICT_SAMPLE; k++) {
            t->rng ^= t->rng << 13; /* xorshift64: spread, not secret */
            t->rng ^= t->rng >> 7;
            t->rng ^= t->rng << 17;
            size_t i = (size_t)(t->rng % t->n);
            if (oldest == SIZE_MAX || t->v[i].last_ms < t->v[oldest].last_ms)
                oldest = i;
        }
        t->n--;
        t->v[oldest] = t->v[t->n];
        t->hash[oldest] = t->hash[t->n];
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->v = cm_xrealloc(t->v, t->cap * sizeof(*t->v));
        t->hash = cm_xrealloc(t->hash, t->cap * sizeof(*t->hash));
    }
}

static guess_t *find_or_add(table_t *t, const char *key, const api_config_t *cfg, int64_t now)
{
    guess_t *g = find(t, key);
    if (g && now - g->last_ms >= forget_ms(cfg))
        g->failures = 0; /* forgotten */
    if (g)
        return g;
    if (t->n == t->cap || t->n == MAX_ENTRIES)
        make_room(t);
    t->hash[t->n] = cm_fnv1a_64(cm_slice_from_cstr(key));
    g = &t->v[t->n++];
    memset(g, 0, sizeof(*g));
    snprintf(g->key, sizeof(g->key), "%s", key); /* fits: an email is at most 254 bytes */
    return g;
}

/* An IPv6 address stands for its /64; anything else for itself. */
static void address_key(const char *ip, char out[CM_IP_BUFLEN + 4])
{
    struct in6_addr a;
    if (inet_pton(AF_INET6, ip, &a) == 1 && !IN6_IS_ADDR_V4MAPPED(&a)) {
        memset(a.s6_addr + 8, 0, 8);
        char text[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, &a, text, sizeof(text));
        snprintf(out, CM_IP_BUFLEN + 4, "%s/64", text);
        return;
    }
    snprintf(out, CM_IP_BUFLEN + 4, "%s", ip);
}

static oauth_guesses_t *guesses_of(api_oauth_t *o)
{
    if (o->guesses == NULL) {
        o->guesses = cm_xcalloc(1, sizeof(*o->guesses));
        o->guesses->accounts.rng = 0x9e3779b97f4a7c15ull;
        o->guesses->addresses.rng = 0xc2b2ae3d27d4eb4full;
    }
    return o->guesses;
}

int64_t api_oauth__guess_begin(api_oauth_t *o, const char *email, const char *ip)
{
    oauth_guesses_t *gs = guesses_of(o);
    const api_config_t *cfg = &o->ctx->cfg;
    int64_t now = now_ms();
    char addr[CM_IP_BUFLEN + 4];
    address_key(ip, addr);
    guess_t *acc = find(&gs->accounts, email), *ad = find(&gs->addresses, addr);
    if (acc && now - acc->last_ms >= forget_ms(cfg))
        acc->failures = 0;
    if (ad && now - ad->last_ms >= forget_ms(cfg))
        ad->failures = 0;
    int64_t w1 = wait_of(acc, cfg->login_free_failures, cfg, now);
    int64_t w2 = wait_of(ad, cfg->login_address_free_failures, cfg, now);
    if (w1 || w2)
        return w1 > w2 ? w1 : w2; /* a refused attempt is not counted */
    acc = find_or_add(&gs->accounts, email, cfg, now);
    acc->failures++;
    acc->last_ms = now;
    ad = find_or_add(&gs->addresses, addr, cfg, now);
    ad->failures++;
    ad->last_ms = now;
    return 0;
}

void api_oauth__guess_end(api_oauth_t *o, const char *email, const char *ip, int outcome)
{
    if (outcome == API_OAUTH_GUESS_WRONG || o->guesses == NULL)
        return; /* counted when it began */
    char addr[CM_IP_BUFLEN + 4];
    address_key(ip, addr);
    guess_t *acc = find(&o->guesses->accounts, email), *ad = find(&o->guesses->addresses, addr);
    if (acc && outcome == API_OAUTH_GUESS_RIGHT)
        acc->failures = 0;
    else if (acc && acc->failures > 0)
        acc->failures--;
    if (ad && ad->failures > 0)
        ad->failures--;
}

int64_t api_oauth_guess_begin(api_oauth_t *o, const char *email, const char *ip)
{
    return api_oauth__guess_begin(o, email, ip);
}

void api_oauth_guess_end(api_oauth_t *o, const char *email, const char *ip, bool checked,
                         bool right)
{
    api_oauth__guess_end(o, email, ip,
                         !checked ? API_OAUTH_GUESS_NONE
                         : right  ? API_OAUTH_GUESS_RIGHT
                                  : API_OAUTH_GUESS_WRONG);
}

void api_oauth__guesses_free(api_oauth_t *o)
{
    if (o->guesses) {
        free(o->guesses->accounts.v);
        free(o->guesses->accounts.hash);
        free(o->guesses->addresses.v);
        free(o->guesses->addresses.hash);
    }
    free(o->guesses);
    o->guesses = NULL;
}
