/*
 * bench_query.c - parse-and-print time of the HogQL compiler
 * (services/api/query) for `scripts/bench endpoints`: each query of the
 * file (one per line) parsed, resolved and printed for SQLite and for
 * ClickHouse, many times; prints the mean and the slowest query's time in
 * microseconds, and the same for the whole line count.
 *
 *   bench_query FILE [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "query/query.h"

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_query FILE [ROUNDS]\n");
        return 2;
    }
    int rounds = argc > 2 ? atoi(argv[2]) : 200;
    FILE *f = fopen(argv[1], "r");
    if (f == NULL) {
        perror(argv[1]);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    double total = 0, worst = 0;
    int queries = 0, failed = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] == '\n')
            line[--n] = '\0';
        if (n == 0)
            continue;
        double t0 = now_us();
        for (int r = 0; r < rounds; r++) {
            cm_buf_t err = CM_BUF_INIT;
            api_query_t *q;
            if (api_query_parse(line, (size_t)n, &q, &err) != 0) {
                failed++;
                cm_buf_free(&err);
                break;
            }
            for (int d = 0; d < 2; d++) {
                api_query_print_opts_t o = {.dialect = d ? API_QUERY_CLICKHOUSE : API_QUERY_SQLITE,
                                            .project_id = 1};
                api_query_sql_t s;
                cm_buf_reset(&err);
                (void)api_query_print(q, &o, &s, &err);
                api_query_sql_free(&s);
            }
            api_query_free(q);
            cm_buf_free(&err);
        }
        double each = (now_us() - t0) / rounds;
        total += each;
        if (each > worst)
            worst = each;
        queries++;
    }
    free(line);
    fclose(f);
    printf("{\"queries\":%d,\"refused\":%d,\"mean_us\":%.1f,\"worst_us\":%.1f}\n", queries, failed,
           queries ? total / queries : 0, worst);
    return 0;
}
