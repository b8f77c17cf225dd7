/*
 * variables.h - query variables' types and values, shared by the
 * insight_variables resource and the endpoints' run (variables.c).
 */
#ifndef API_RESOURCES_VARIABLES_H
#define API_RESOURCES_VARIABLES_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/arena.h"
#include "cm/json.h"
#include "query/query.h"

enum { API_VAR_STRING, API_VAR_NUMBER, API_VAR_BOOLEAN, API_VAR_LIST, API_VAR_DATE };

/* "String" ... "Date" -> API_VAR_*, or -1. */
int api_variable_type(const char *name);
/* Whether v is a value of that type; why says what was expected. A List
 * takes one value or an array of them; a Date is YYYY-MM-DD, maybe with a
 * time. null fits every type. */
bool api_variable_fits(int type, cm_json_t v, char *why, size_t size);
/* v as a query value; strings decoded into the arena. */
void api_variable_value(cm_json_t v, cm_arena_t *arena, api_query_value_t *out);
/* The OpenAPI schema type of a variable type: "string", "number", ... */
const char *api_variable_schema_type(int type);

#endif
