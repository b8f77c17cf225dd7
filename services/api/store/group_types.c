/* group_types.c - the project's group type mapping (see store.h). */
#include "cm/common.h"
#include "store/store.h"

void api_store_group_types_list(cm_db_t *db, const char *project_id, cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id};
    cm_db_stmt_t s = {"SELECT group_type_index, group_type, COUNT(*) OVER () FROM group_types"
                      " WHERE project_id = $1 ORDER BY group_type_index",
                      p, 1};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_group_type_create(cm_db_t *db, const char *project_id, const char *group_type,
                                 cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {project_id, group_type};
    const char *q[] = {project_id, now};
    cm_db_stmt_t s[] = {
        /* the lowest free index of five; none left inserts nothing */
        {"INSERT INTO group_types (project_id, group_type_index, group_type)"
         " SELECT $1, n.i, $2 FROM (SELECT 0 AS i UNION ALL SELECT 1 UNION ALL SELECT 2"
         " UNION ALL SELECT 3 UNION ALL SELECT 4) n WHERE NOT EXISTS (SELECT 1 FROM group_types g"
         " WHERE g.project_id = $1 AND g.group_type_index = n.i) ORDER BY n.i LIMIT 1"
         " RETURNING group_type_index, group_type, 1",
         p, 2},
        {"INSERT INTO outbox (project_id, created_at) VALUES ($1, $2)", q, 2},
    };
    cm_db_run(db, s, 2, done, ud);
}
