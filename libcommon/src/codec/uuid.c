/*
 * uuid.c - UUIDv7 / UUIDv4 generation, validation, and the random source.
 *
 * Random bytes come from a small pool refilled with getrandom(2), so the
 * common case (one UUID per event) costs a memcpy, not a syscall. The pool
 * and the v7 counter sit behind one mutex: generation is cheap, contention
 * is rare, and it keeps worker threads safe without thread-local state.
 * A forked child drops the pool it inherited, otherwise parent and child
 * would hand out the same "random" bytes.
 *
 * v7 layout (RFC 9562, "method 1" counter in rand_a):
 *   48 bits unix_ms | ver 0111 | 12-bit counter | var 10 | 62 random bits
 * The counter is seeded randomly at each new millisecond (with its top bit
 * clear, leaving at least 2048 increments of headroom) and incremented for
 * every further id in that millisecond. When it would overflow we borrow the
 * next millisecond; the timestamp then runs slightly ahead of the clock
 * until the clock catches up. A clock that steps backwards is treated the
 * same way, so ids from cm_uuid_v7() never go backwards in this process.
 */
#include "cm/uuid.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <mbedtls/sha1.h>
#include <mbedtls/version.h>

#include "cm/err.h"
#include "cm/hex.h"
#include "cm/timefmt.h"

#define POOL_SIZE 4096                      /* one getrandom() per few hundred UUIDs */
#define V7_MAX_MS ((int64_t)0xffffffffffff) /* 48 bits */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static unsigned char pool[POOL_SIZE];
static size_t pool_left; /* unread bytes at the end of pool */
static int64_t v7_last_ms = -1;
static unsigned v7_counter;

static void fatal(const char *what)
{
    fprintf(stderr, "{\"level\":\"fatal\",\"msg\":\"no randomness: %s\"}\n", what);
    abort();
}

static void urandom_fill(void *buf, size_t n)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fatal("cannot open /dev/urandom");
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            fatal("read /dev/urandom failed");
        p += r;
        n -= (size_t)r;
    }
    close(fd);
}

/* Unbuffered: getrandom until n bytes arrived, or /dev/urandom if the
 * kernel has no getrandom (ENOSYS) or a seccomp filter forbids it. */
static void os_fill(void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t r = getrandom(p, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            urandom_fill(p, n);
            return;
        }
        p += r;
        n -= (size_t)r;
    }
}

static void atfork_prepare(void)
{
    pthread_mutex_lock(&lock);
}
static void atfork_parent(void)
{
    pthread_mutex_unlock(&lock);
}
static void atfork_child(void)
{
    pool_left = 0;
    explicit_bzero(pool, sizeof(pool));
    pthread_mutex_unlock(&lock);
}

static void register_atfork(void)
{
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* Caller holds lock. Bytes handed out are wiped so they cannot leak later. */
static void pool_take(void *buf, size_t n)
{
    unsigned char *out = buf;
    while (n > 0) {
        if (pool_left == 0) {
            os_fill(pool, POOL_SIZE);
            pool_left = POOL_SIZE;
        }
        size_t k = n < pool_left ? n : pool_left;
        unsigned char *src = pool + POOL_SIZE - pool_left;
        memcpy(out, src, k);
        explicit_bzero(src, k);
        pool_left -= k;
        out += k;
        n -= k;
    }
}

void cm_random_bytes(void *buf, size_t n)
{
    /* Big requests would just churn the pool; read them directly. */
    if (n >= POOL_SIZE) {
        os_fill(buf, n);
        return;
    }
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&lock);
    pool_take(buf, n);
    pthread_mutex_unlock(&lock);
}

static void to_text(const unsigned char b[16], char out[CM_UUID_STR_LEN + 1])
{
    char *o = out;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *o++ = '-';
        cm_hex_byte(b[i], o);
        o += 2;
    }
    *o = '\0';
}

/* b[6..15] already hold random bits; sets time, version, rand_a, variant. */
static void v7_encode(unsigned char b[16], int64_t ms, unsigned rand_a)
{
    for (int i = 0; i < 6; i++)
        b[i] = (unsigned char)(ms >> (40 - 8 * i));
    b[6] = (unsigned char)(0x70 | ((rand_a >> 8) & 0x0f));
    b[7] = (unsigned char)(rand_a & 0xff);
    b[8] = (unsigned char)(0x80 | (b[8] & 0x3f));
}

static int64_t clamp_ms(int64_t ms)
{
    return ms < 0 ? 0 : ms > V7_MAX_MS ? V7_MAX_MS : ms;
}

void cm_uuid_v7(char out[CM_UUID_STR_LEN + 1])
{
    unsigned char b[16];
    int64_t now = clamp_ms(cm_now_us() / 1000);

    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&lock);
    pool_take(b, sizeof(b));
    if (now > v7_last_ms) {
        v7_last_ms = now;
        v7_counter = ((unsigned)b[6] << 8 | b[7]) & 0x7ff;
    } else if (++v7_counter > 0xfff) {
        /* Saturating at the 48-bit limit is year 10889; not worth more. */
        if (v7_last_ms < V7_MAX_MS)
            v7_last_ms++;
        v7_counter = ((unsigned)b[6] << 8 | b[7]) & 0x7ff;
    }
    int64_t ms = v7_last_ms;
    unsigned counter = v7_counter;
    pthread_mutex_unlock(&lock);

    v7_encode(b, ms, counter);
    to_text(b, out);
}

void cm_uuid_v7_at(int64_t unix_ms, char out[CM_UUID_STR_LEN + 1])
{
    /* An explicit timestamp (e.g. an event's own time) does not touch the
     * process counter: rand_a is plain random here. */
    unsigned char b[16];
    cm_random_bytes(b, sizeof(b));
    v7_encode(b, clamp_ms(unix_ms), ((unsigned)b[6] << 8 | b[7]) & 0xfff);
    to_text(b, out);
}

void cm_uuid_v4(char out[CM_UUID_STR_LEN + 1])
{
    unsigned char b[16];
    cm_random_bytes(b, sizeof(b));
    b[6] = (unsigned char)(0x40 | (b[6] & 0x0f));
    b[8] = (unsigned char)(0x80 | (b[8] & 0x3f));
    to_text(b, out);
}

static int hex_digit(char c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

bool cm_uuid_bytes(const char *s, size_t len, unsigned char out[16])
{
    if (!cm_uuid_valid(s, len))
        return false;
    for (size_t i = 0, j = 0; i < 16; j++) {
        if (s[j] == '-')
            continue;
        out[i++] = (unsigned char)(hex_digit(s[j]) << 4 | hex_digit(s[j + 1]));
        j++;
    }
    return true;
}

/* RFC 9562 section 5.5: SHA-1 of the namespace's 16 bytes then the name. */
int cm_uuid_v5(const char *ns, const void *name, size_t len, char out[CM_UUID_STR_LEN + 1])
{
    unsigned char nsb[16], digest[20];
    if (!cm_uuid_bytes(ns, strlen(ns), nsb))
        return CM_EINVAL;
    mbedtls_sha1_context c;
    mbedtls_sha1_init(&c);
#if MBEDTLS_VERSION_MAJOR >= 3
    mbedtls_sha1_starts(&c);
    mbedtls_sha1_update(&c, nsb, sizeof(nsb));
    mbedtls_sha1_update(&c, name, len);
    mbedtls_sha1_finish(&c, digest);
#else
    mbedtls_sha1_starts_ret(&c);
    mbedtls_sha1_update_ret(&c, nsb, sizeof(nsb));
    mbedtls_sha1_update_ret(&c, name, len);
    mbedtls_sha1_finish_ret(&c, digest);
#endif
    mbedtls_sha1_free(&c);
    digest[6] = (unsigned char)(0x50 | (digest[6] & 0x0f));
    digest[8] = (unsigned char)(0x80 | (digest[8] & 0x3f));
    to_text(digest, out);
    return CM_OK;
}

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool cm_uuid_valid(const char *s, size_t len)
{
    if (s == NULL || len != CM_UUID_STR_LEN)
        return false;
    for (size_t i = 0; i < len; i++) {
        bool dash_pos = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash_pos ? s[i] != '-' : !is_hex(s[i]))
            return false;
    }
    return true;
}
