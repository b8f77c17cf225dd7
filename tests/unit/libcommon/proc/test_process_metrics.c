/* test_process_metrics.c - the process_* series against what this process
 * can see for itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cm/metrics.h"

static char *render(const cm_metrics_t *m, cm_buf_t *b)
{
    cm_buf_reset(b);
    cm_metrics_render(m, b);
    return cm_buf_cstr(b);
}

/* Reads a sample's value from rendered text ("name value" on its own line). */
static double sample(const char *text, const char *name)
{
    char key[96];
    snprintf(key, sizeof(key), "\n%s ", name);
    const char *p = strstr(text, key);
    assert_non_null(p);
    return strtod(p + strlen(key), NULL);
}

static void test_process_series(void **state)
{
    (void)state;
    cm_metrics_t *m = cm_metrics_new();
    int extra = open("/dev/null", O_RDONLY);
    assert_true(extra >= 0);
    cm_metrics_process_update(m);
    cm_buf_t b = CM_BUF_INIT;
    const char *t = render(m, &b);
    assert_non_null(strstr(t, "# TYPE process_cpu_seconds_total counter\n"));
    assert_non_null(strstr(t, "# TYPE process_open_fds gauge\n"));
    double fds = sample(t, "process_open_fds");
    assert_true(fds >= 4); /* stdin, stdout, stderr, extra */
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    assert_true(sample(t, "process_max_fds") == (double)rl.rlim_cur);
    double rss = sample(t, "process_resident_memory_bytes");
    assert_true(rss > 100 * 1024);
    assert_true(sample(t, "process_virtual_memory_bytes") >= rss);
    double start = sample(t, "process_start_time_seconds");
    double now = (double)time(NULL);
    assert_true(start > now - 3600 && start <= now + 1);
    assert_true(sample(t, "process_cpu_seconds_total") >= 0);
    close(extra);
    cm_metrics_process_update(m); /* one descriptor fewer, same families */
    t = render(m, &b);
    assert_true(sample(t, "process_open_fds") == fds - 1);
    cm_buf_free(&b);
    cm_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_process_series),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
