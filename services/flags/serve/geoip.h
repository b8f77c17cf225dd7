/*
 * geoip.h - the $geoip_* person properties PostHog derives from a /flags
 * request's client address (docs: notes on flags, section 6.5; the address
 * itself comes from cm/client_ip.h under FLAGS_TRUSTED_PROXIES).
 *
 * With GEOIP_DB pointing at a MaxMind DB in the GeoIP2/GeoLite2 City
 * schema, the service looks the client address up and produces up to seven
 * string properties, each only when the DB record has that field as a
 * string:
 *
 *   $geoip_country_name    country.names.en
 *   $geoip_city_name       city.names.en
 *   $geoip_country_code    country.iso_code
 *   $geoip_continent_name  continent.names.en
 *   $geoip_continent_code  continent.code
 *   $geoip_postal_code     postal.code
 *   $geoip_time_zone       location.time_zone
 *
 * Only English names are used: a record whose names lack "en" gives no
 * name property. 127.0.0.1 and ::1 are never looked up; an address that is
 * not in the DB (private ranges, unknown space) or is not an IP literal
 * gives nothing. None of this is an error: GeoIP can only add properties,
 * never fail a request.
 *
 * The DB is mmap'd (MMDB_MODE_MMAP), so a lookup is a walk over mapped
 * memory with no system calls: cheap enough for the event loop. The handle
 * is read-only after flg_geoip_open and may be shared by every request.
 */
#ifndef FLG_GEOIP_H
#define FLG_GEOIP_H

#include <stddef.h>

#include "cm/buf.h"
#include "cm/json.h"

typedef struct flg_geoip flg_geoip_t;

/*
 * Opens the MaxMind DB at path. 0 and *out set on success; CM_EIO (with
 * the reason logged) if the file is missing, unreadable or not a MaxMind
 * DB, and *out = NULL.
 */
int flg_geoip_open(const char *path, flg_geoip_t **out);
void flg_geoip_close(flg_geoip_t *g); /* NULL is fine */

/*
 * Looks up ip (an IPv4 or IPv6 literal, as cm_client_ip returns it) and
 * writes each property found as a key and a string value into the object
 * the caller has already opened on w. Returns how many it wrote, 0..7.
 * g == NULL (no GEOIP_DB), ip == NULL, an invalid literal, loopback and
 * addresses not in the DB all give 0 and write nothing.
 */
int flg_geoip_lookup(const flg_geoip_t *g, const char *ip, cm_json_writer_t *w);

#endif
