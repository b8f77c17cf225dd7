/*
 * servers.h - real servers for the unit tests that need them: child
 * processes (killed with the test however it ends: PR_SET_PDEATHSIG), a
 * redis-server on a random high port checked to be ours, and the Kafka
 * test broker (tests/support/kafka_broker, next to the test binary so the
 * sanitizer tree uses its own). Header-only: each test binary is one file.
 */
#ifndef TEST_SERVERS_H
#define TEST_SERVERS_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
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

#include "cm/json.h"

static inline uint64_t srv_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* fork + exec with extra environment (name, value, ..., NULL); the child's
 * stdout goes to a pipe whose read end is *out_fd (or to /dev/null when
 * NULL), its stderr to /dev/null unless verbose_env is set. */
static inline pid_t srv_spawn(char *const argv[], const char *const env[], int *out_fd,
                              const char *verbose_env)
{
    int fds[2] = {-1, -1};
    if (out_fd != NULL && pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (size_t i = 0; env != NULL && env[i] != NULL; i += 2)
            setenv(env[i], env[i + 1], 1);
        int null = open("/dev/null", O_RDWR);
        dup2(out_fd != NULL ? fds[1] : null, STDOUT_FILENO);
        if (verbose_env == NULL || getenv(verbose_env) == NULL)
            dup2(null, STDERR_FILENO);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (out_fd != NULL) {
        close(fds[1]);
        *out_fd = fds[0];
    }
    return pid;
}

static inline void srv_reap(pid_t *pid, int sig)
{
    if (*pid <= 0)
        return;
    kill(*pid, sig);
    kill(*pid, SIGCONT); /* a test that failed may have left it stopped */
    waitpid(*pid, NULL, 0);
    *pid = 0;
}

/* Reads one line within timeout_ms; false on EOF or timeout. */
static inline bool srv_read_line(int fd, char *buf, size_t cap, int timeout_ms)
{
    size_t n = 0;
    uint64_t deadline = srv_now_ms() + (uint64_t)timeout_ms;
    while (n + 1 < cap) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int left = (int)(deadline - srv_now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0 || read(fd, buf + n, 1) != 1)
            return false;
        if (buf[n] == '\n')
            break;
        n++;
    }
    buf[n] = '\0';
    return true;
}

/* The directory of tests/support next to this test binary. */
static inline int srv_support_dir(char *out, size_t cap)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    snprintf(out, cap, "%s/support", dirname(exe));
    return 0;
}

/* The Kafka test broker with topics (comma list); fills bootstrap. */
static inline int srv_start_broker(const char *topics, const char *partitions, pid_t *pid,
                                   char *bootstrap, size_t cap, const char *verbose_env)
{
    char dir[PATH_MAX], path[PATH_MAX + 32], line[256];
    if (srv_support_dir(dir, sizeof(dir)) != 0)
        return -1;
    snprintf(path, sizeof(path), "%s/kafka_broker", dir);
    char *argv[] = {path, NULL};
    const char *env[] = {"TOPICS", topics, "PARTITIONS", partitions, NULL};
    int fd = -1;
    *pid = srv_spawn(argv, env, &fd, verbose_env);
    bool ok = *pid > 0 && srv_read_line(fd, line, sizeof(line), 10000);
    close(fd);
    cm_json_doc_t *doc = NULL;
    cm_slice_t boot = CM_SLICE_NULL;
    if (ok && cm_json_parse(line, strlen(line), NULL, &doc, NULL) == 0)
        cm_json_as_str(cm_json_get(cm_json_root(doc), "bootstrap"), NULL, &boot);
    snprintf(bootstrap, cap, "%.*s", (int)boot.len, boot.p ? boot.p : "");
    cm_json_doc_free(doc);
    if (bootstrap[0] == '\0') {
        fprintf(stderr, "kafka_broker did not start (%s)\n", path);
        return -1;
    }
    return 0;
}

/* True once the redis-server on port answers and is pid (INFO's
 * process_id), not someone else's server on a taken port. */
static inline bool srv_redis_is(int port, pid_t pid)
{
    static const char req[] = "*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n";
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct timeval tv = {0, 300000};
    char buf[8192], want[48];
    size_t n = 0;
    ssize_t k;
    bool ok = false;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    snprintf(want, sizeof(want), "process_id:%d\r\n", (int)pid);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        write(s, req, sizeof(req) - 1) == (ssize_t)(sizeof(req) - 1)) {
        while (!ok && n < sizeof(buf) - 1 && (k = read(s, buf + n, sizeof(buf) - 1 - n)) > 0) {
            buf[n += (size_t)k] = '\0';
            ok = strstr(buf, want) != NULL;
        }
    }
    close(s);
    return ok;
}

/* redis-server on a random high port below the usual ephemeral range (the
 * normal and sanitizer trees may run at once); another port if that one
 * was taken. extra: more "--name value" arguments, NULL-terminated. */
static inline int srv_start_redis(int *port, pid_t *pid, const char *const *extra)
{
    srand((unsigned)(getpid() ^ time(NULL)));
    for (int attempt = 0; attempt < 5; attempt++) {
        char portstr[16];
        *port = 20000 + rand() % 12000;
        snprintf(portstr, sizeof(portstr), "%d", *port);
        char *argv[32] = {"redis-server", "--port", portstr,        "--bind", "127.0.0.1",
                          "--save",       "",       "--appendonly", "no"};
        size_t argc = 9;
        for (size_t i = 0; extra && extra[i] && argc < 30; i++)
            argv[argc++] = (char *)extra[i];
        argv[argc] = NULL;
        *pid = srv_spawn(argv, NULL, NULL, NULL);
        for (uint64_t end = srv_now_ms() + 5000; srv_now_ms() < end; usleep(20000)) {
            if (waitpid(*pid, NULL, WNOHANG) == *pid) {
                *pid = 0; /* exited: port in use? */
                break;
            }
            if (srv_redis_is(*port, *pid))
                return 0;
        }
        srv_reap(pid, SIGKILL);
    }
    return -1;
}

#endif
