/*
 * print_fn_array.c - arrays, tuples and lambdas for SQLite and ClickHouse:
 * native on ClickHouse, JSON arrays on SQLite (docs/endpoints.md).
 */
#include <string.h>

#include "query/print_int.h"

/* The call if it is one of this file's functions (print_fn.c dispatches). */
bool q_pcall_array(q_printer_t *pr, const q_expr_t *e)
{
    (void)pr;
    switch ((int)e->ival) {
    default: return false;
    }
}
