/* http_int.h - shared inside services/api/http/ only. */
#ifndef API_HTTP_INT_H
#define API_HTTP_INT_H

#include "http/http.h"

/* call.c: ends the call after its response. */
void api_http__call_end(api_call_t *call);

#endif
