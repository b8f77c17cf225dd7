/*
 * fuzz_event.c - libFuzzer target for the writer's message-to-event path
 * (services/writer/event.c) and the person rules it feeds
 * (services/writer/persons.c): any bytes a queue could hold.
 *
 * The input is split at the first NUL into two messages, both applied to
 * one batch state in order, so merges between two fuzzed events run too.
 * Every event that survives must have a person, JSON person properties and
 * JSON stored properties.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm/json.h"
#include "event.h"
#include "persons.h"

static void check_json(const char *p, size_t n)
{
    cm_json_doc_t *doc = NULL;
    if (cm_json_parse(p, n, NULL, &doc, NULL) != 0 ||
        cm_json_type(cm_json_root(doc)) != CM_JSON_OBJECT)
        abort();
    cm_json_doc_free(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    const char *nul = memchr(p, '\0', size);
    size_t n1 = nul ? (size_t)(nul - p) : size;
    wr_event_t ev[2];
    size_t nev = 0;
    wr_event_parse(&ev[nev++], p, n1, 1 << 20);
    if (nul)
        wr_event_parse(&ev[nev++], nul + 1, size - n1 - 1, 1 << 20);
    wr_state_t st;
    wr_state_init(&st);
    for (size_t i = 0; i < nev; i++) {
        if (ev[i].fate != WR_EVENT_OK) {
            if (ev[i].reason == NULL)
                abort();
            continue;
        }
        ev[i].project_id = 1 + (long long)(size % 3);
        wr_persons_apply(&st, &ev[i], size % 5 == 0);
        if (strlen(ev[i].person_id) != 36 || ev[i].person_properties == NULL)
            abort();
        check_json(ev[i].person_properties, strlen(ev[i].person_properties));
        cm_buf_t out = CM_BUF_INIT;
        wr_event_properties_json(&ev[i], &out);
        check_json(out.p, out.len);
        cm_buf_free(&out);
    }
    for (size_t i = 0; i < st.npersons; i++) {
        cm_buf_t out = CM_BUF_INIT;
        wr_props_write(&st.persons[i]->props, &out);
        check_json(out.p, out.len);
        cm_buf_free(&out);
    }
    wr_state_free(&st);
    for (size_t i = 0; i < nev; i++)
        wr_event_free(&ev[i]);
    return 0;
}
