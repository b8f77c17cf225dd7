/*
 * person_name.h - the `name` a person is shown by in the persons list,
 * PostHog's rule (its api/person.py get_person_name, the frontend's
 * PERSON_DEFAULT_DISPLAY_NAME_PROPERTIES): the first of the properties
 * email, Email, name, Name, username, Username, UserName that is set to a
 * truthy value (Python's truth: not "", 0, false, null, [] or {}), as it
 * is; else the first distinct id that does not look like an anonymous id
 * (five dash-joined groups of [a-z0-9], a UUID's shape); else the first
 * distinct id; else the person's id. docs/persons.md.
 */
#ifndef API_PERSON_NAME_H
#define API_PERSON_NAME_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/json.h"

/* Whether PostHog takes a distinct id for an anonymous one (its
 * is_anonymous_id): ^([a-z0-9]+-){4}[a-z0-9]+$ */
bool api_person_id_looks_anonymous(const char *distinct_id);

/* Writes the name as the value of the key w has pending. properties is the
 * stored JSON object (NULL or unreadable: none); ids[0..nids) the person's
 * distinct ids in their stored order. */
void api_person_name_write(cm_json_writer_t *w, const char *properties, const char *const *ids,
                           size_t nids, const char *person_id);

#endif
