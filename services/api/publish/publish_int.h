/* publish_int.h - shared inside services/api/publish/ only. */
#ifndef API_PUBLISH_INT_H
#define API_PUBLISH_INT_H

#include "cm/buf.h"
#include "cm/db.h"

/* definitions.c: the envelope of a project from api_store_fleet_project's
 * tables 1 (flags), 2 (group types) and 3 (cohorts). */
void api_publish__envelope(cm_buf_t *out, const cm_db_res_t *res, const char *project_id);

#endif
