/*
 * fuzz_net.h - for fuzz targets that drive an in-process libcommon HTTP
 * server over a real loopback connection (header-only: each target is one
 * translation unit).
 *
 * fuzz_exchange() sends the bytes, shuts down the write side, runs the loop
 * until the server has closed the connection and returns what it sent
 * back. fuzz_check_responses() aborts unless that is a sequence of complete
 * HTTP/1.1 responses.
 */
#ifndef FUZZ_NET_H
#define FUZZ_NET_H

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

/* A non-blocking client socket connected to the server on port, or -1.
 * Spreading the client side over 127.0.0.2-251 keeps TIME_WAIT from
 * exhausting the port space over hundreds of thousands of runs. */
static inline int fuzz_connect(uv_loop_t *loop, int port)
{
    static unsigned n_conn;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in src = {.sin_family = AF_INET};
    src.sin_addr.s_addr = htonl(INADDR_LOOPBACK + 1 + (n_conn++ % 250));
    bind(fd, (struct sockaddr *)&src, sizeof(src));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int tries = 0;
    while (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        if (++tries == 50) {
            close(fd);
            return -1;
        }
        uv_run(loop, UV_RUN_NOWAIT);
        usleep(1000);
    }
    fcntl(fd, F_SETFL, O_NONBLOCK);
    return fd;
}

/* Returns the server's bytes (malloc'd; *n their count) once it closed the
 * connection, or NULL when the harness could not connect or the server
 * never closed (neither is a finding about the server's input handling). */
static inline char *fuzz_exchange(uv_loop_t *loop, int port, const uint8_t *data, size_t size,
                                  size_t *n)
{
    int fd = fuzz_connect(loop, port);
    if (fd < 0)
        return NULL;
    size_t sent = 0, got = 0, cap = 1 << 16;
    char *out = malloc(cap);
    bool shut = false, eof = false;
    for (int spins = 0; !eof && spins < 200000; spins++) {
        if (sent < size) {
            ssize_t w = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
            if (w > 0)
                sent += (size_t)w;
            else if (w < 0 && errno != EAGAIN)
                sent = size; /* the server closed on us: fine */
        } else if (!shut) {
            shutdown(fd, SHUT_WR);
            shut = true;
        }
        uv_run(loop, UV_RUN_NOWAIT);
        for (;;) {
            if (got == cap)
                out = realloc(out, cap *= 2);
            ssize_t r = recv(fd, out + got, cap - got, 0);
            if (r > 0) {
                got += (size_t)r;
                continue;
            }
            if (r == 0 || (r < 0 && errno != EAGAIN))
                eof = true;
            break;
        }
    }
    close(fd);
    /* Let the server finish closing its side before the next input. */
    for (int i = 0; i < 8; i++)
        uv_run(loop, UV_RUN_NOWAIT);
    if (!eof) {
        free(out);
        return NULL;
    }
    *n = got;
    return out;
}

/* True when a response starts at i, or i is the end. */
static inline bool fuzz_starts_response(const char *out, size_t n, size_t i)
{
    return i == n || (i < n && n - i >= 9 && memcmp(out + i, "HTTP/1.1 ", 9) == 0);
}

/* Aborts unless out[0..n) is complete HTTP/1.1 responses (100 Continue
 * included). A HEAD response announces a length but carries no body:
 * accepted when the next response (or the end) follows the head directly. */
static inline void fuzz_check_responses(const char *out, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (n - i < 12 || memcmp(out + i, "HTTP/1.1 ", 9) != 0)
            abort();
        const char *end = memmem(out + i, n - i, "\r\n\r\n", 4);
        if (end == NULL)
            abort();
        size_t head_end = (size_t)(end - out) + 4;
        const char *cl = memmem(out + i, head_end - i, "Content-Length: ", 16);
        size_t len = cl ? strtoul(cl + 16, NULL, 10) : 0;
        if (!fuzz_starts_response(out, n, head_end + len) && fuzz_starts_response(out, n, head_end))
            len = 0; /* a HEAD response */
        if (head_end + len > n)
            abort();
        i = head_end + len;
    }
}

#endif
