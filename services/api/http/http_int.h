/* http_int.h - shared inside services/api/http/ only. */
#ifndef API_HTTP_INT_H
#define API_HTTP_INT_H

#include "http/http.h"

/* auth.c: authenticates call, checks scope and project, then runs the
 * route's handler (or answers 401/403/404/503 itself). */
void api_http__authorize(api_call_t *call);
/* call.c: ends the call after its response. */
void api_http__call_end(api_call_t *call);

#endif
