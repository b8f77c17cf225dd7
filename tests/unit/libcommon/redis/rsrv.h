/*
 * rsrv.h - a redis-server process for the Redis unit tests (header-only:
 * test_redis.c and test_redis_tls.c each build into their own binary).
 *
 * It picks a random high port (two concurrent runs, e.g. the normal and the
 * sanitizer trees, must not collide), retries on another port when the
 * server does not come up, checks through INFO that the process answering is
 * really ours, and always kills the server by pid: group teardown, atexit,
 * and PR_SET_PDEATHSIG for the cases where the test process dies hard.
 * With tls set, the server also serves TLS on tls_port with the certificates
 * rsrv_make_certs() wrote into its directory, and a unix socket there.
 */
#ifndef RSRV_H
#define RSRV_H

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    pid_t pid; /* 0 when not running */
    int port;
    char dir[200]; /* mkdtemp working directory; "" before the first start */
    bool tls;      /* also TLS on tls_port (and a unix socket): set before the start */
    int tls_port;
} rsrv_t;

#define RSRV_PORT_LO   20000
#define RSRV_PORT_SPAN 12000 /* stays below the usual ephemeral range */

static inline uint32_t rsrv_rand(void)
{
    static uint32_t x;
    if (x == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        x = (uint32_t)getpid() * 2654435761u ^ (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec;
        x |= 1;
    }
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

/* True when nothing is bound to 127.0.0.1:port right now. */
static inline bool rsrv_port_free(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

static inline int rsrv_random_free_port(void)
{
    for (int i = 0; i < 100; i++) {
        int port = RSRV_PORT_LO + (int)(rsrv_rand() % RSRV_PORT_SPAN);
        if (rsrv_port_free(port))
            return port;
    }
    return -1;
}

static inline void rsrv_path(const rsrv_t *s, const char *file, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", s->dir, file);
}

static inline pid_t rsrv_spawn(const rsrv_t *s)
{
    char port[16], log[260];
    pid_t parent = getpid();

    snprintf(port, sizeof(port), "%d", s->port);
    rsrv_path(s, "redis.log", log, sizeof(log));
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    /* Child: die with the test process, whatever kills it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
    }
    close_range(3, ~0U, 0); /* no test sockets or loop fds in the server */
    char tls_port[16], cert[260], key[260], ca[260], sock[260];
    const char *argv[40] = {"redis-server", "--port",      port, "--bind",
                            "127.0.0.1",    "--save",      "",   "--appendonly",
                            "no",           "--daemonize", "no", "--dir",
                            s->dir,         "--logfile",   log,  "--enable-debug-command",
                            "yes"};
    int argc = 17;
    if (s->tls) {
        snprintf(tls_port, sizeof(tls_port), "%d", s->tls_port);
        rsrv_path(s, "server.pem", cert, sizeof(cert));
        rsrv_path(s, "server.key", key, sizeof(key));
        rsrv_path(s, "ca.pem", ca, sizeof(ca));
        rsrv_path(s, "redis.sock", sock, sizeof(sock));
        const char *more[] = {"--tls-port",         tls_port, "--tls-cert-file",    cert,
                              "--tls-key-file",     key,      "--tls-ca-cert-file", ca,
                              "--tls-auth-clients", "no",     "--unixsocket",       sock,
                              "--unixsocketperm",   "700"};
        for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
            argv[argc++] = more[i];
    }
    argv[argc] = NULL;
    execvp("redis-server", (char *const *)argv);
    _exit(127);
}

/* 0 when the server on s->port is process s->pid (asked through INFO). */
static inline int rsrv_probe(const rsrv_t *s)
{
    static const char req[] = "*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n";
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->port)};
    struct timeval tv = {0, 300000};
    char buf[16384], want[48];
    size_t n = 0;
    ssize_t k;
    int rc = -1;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    snprintf(want, sizeof(want), "process_id:%d\r\n", (int)s->pid);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        write(fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1))
        goto out;
    while (n < sizeof(buf) - 1 && (k = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0) {
        n += (size_t)k;
        buf[n] = '\0';
        if (strstr(buf, want) != NULL) {
            rc = 0;
            break;
        }
    }
out:
    close(fd);
    return rc;
}

/* Waits until our process answers; -1 if it exits (port taken) or is slow. */
static inline int rsrv_wait_ready(rsrv_t *s, int ms)
{
    for (int waited = 0; waited < ms; waited += 20) {
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            s->pid = 0;
            return -1;
        }
        if (rsrv_probe(s) == 0)
            return 0;
        usleep(20 * 1000);
    }
    return -1;
}

static inline void rsrv_kill(rsrv_t *s)
{
    if (s->pid <= 0)
        return;
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
}

static inline void rsrv_dump_log(const rsrv_t *s)
{
    char path[260], line[512];
    rsrv_path(s, "redis.log", path, sizeof(path));
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f) != NULL)
        fprintf(stderr, "  redis-server: %s", line);
    fclose(f);
}

/* (Re)starts on s->port. */
static inline int rsrv_restart(rsrv_t *s)
{
    rsrv_kill(s);
    for (int attempt = 0; attempt < 3; attempt++) {
        s->pid = rsrv_spawn(s);
        if (s->pid > 0 && rsrv_wait_ready(s, 5000) == 0)
            return 0;
        rsrv_kill(s);
    }
    rsrv_dump_log(s);
    return -1;
}

/* Makes the working directory now (rsrv_start would): certificates go in
 * before the server starts. */
static inline int rsrv_make_dir(rsrv_t *s)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(s->dir, sizeof(s->dir), "%s/cm-redis-test-XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
    if (mkdtemp(s->dir) == NULL) {
        s->dir[0] = '\0';
        return -1;
    }
    return 0;
}

/* Starts on a random free port, trying others if the server fails. */
static inline int rsrv_start(rsrv_t *s)
{
    if (s->dir[0] == '\0' && rsrv_make_dir(s) != 0)
        return -1;
    for (int attempt = 0; attempt < 10; attempt++) {
        s->port = rsrv_random_free_port();
        s->tls_port = s->tls ? rsrv_random_free_port() : 0;
        if (s->port < 0 || s->tls_port < 0 || s->tls_port == s->port)
            continue;
        s->pid = rsrv_spawn(s);
        if (s->pid > 0 && rsrv_wait_ready(s, 5000) == 0)
            return 0;
        rsrv_kill(s);
    }
    rsrv_dump_log(s);
    return -1;
}

/* With the openssl CLI, into the directory: ca.pem (the CA), server.pem /
 * server.key (signed by it, for localhost and 127.0.0.1) and other-ca.pem
 * (a CA that signed nothing here). 0 when all went well. */
static inline int rsrv_make_certs(rsrv_t *s)
{
    char cmd[2048];
    if (s->dir[0] == '\0' && rsrv_make_dir(s) != 0)
        return -1;
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && "
             "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 "
             "-subj /CN=test-ca && "
             "openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.pem "
             "-days 2 -subj /CN=other-ca && "
             "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
             "-subj /CN=localhost && "
             "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > server.ext && "
             "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
             "-out server.pem -days 2 -extfile server.ext",
             s->dir);
    char full[2100];
    snprintf(full, sizeof(full), "(%s) >/dev/null 2>&1", cmd);
    return system(full) == 0 ? 0 : -1;
}

/* Kills the server and removes its directory. */
static inline void rsrv_cleanup(rsrv_t *s)
{
    rsrv_kill(s);
    if (s->dir[0] == '\0')
        return;
    DIR *d = opendir(s->dir);
    struct dirent *e;
    char path[512];
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", s->dir, e->d_name);
        unlink(path);
    }
    if (d != NULL)
        closedir(d);
    rmdir(s->dir);
    s->dir[0] = '\0';
}

#endif
