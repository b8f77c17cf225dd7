/*
 * bench_json.c - throughput of the JSON parser, accessors and writer on
 * posthog-js-like capture batches.
 *
 *   build/tests/support/bench_json [seconds-per-phase, default 2]
 *
 * It builds, in memory and deterministically (fixed-seed PRNG), batches of
 * 50 events with about 70 properties each: URLs, browser and device fields,
 * numbers, booleans, nulls, nested $set objects, flag arrays, non-ASCII
 * text and a few escapes, roughly 1.5 KB per event as JSON.stringify would
 * send them. Then, each for the given time:
 *   parse  cm_json_parse_into() on a reused document (the ingest hot path);
 *   walk   per event: event name, distinct_id, properties and a few of them;
 *   write  cm_json_value() re-serialising every event into one buffer.
 * Each phase prints "<name>_mb_per_s" (input bytes; output bytes for write)
 * and "<name>_events_per_s", one per line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cm/buf.h"
#include "cm/json.h"

#define BATCHES          4
#define EVENTS_PER_BATCH 50

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
    /* xorshift64*: plenty for picking test content. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 33) % n;
}

static const char *pick(const char *const *list, size_t n)
{
    return list[rnd((uint32_t)n)];
}
#define PICK(list) pick(list, sizeof(list) / sizeof(list[0]))

static const char *const browsers[] = {"Chrome", "Firefox", "Safari", "Microsoft Edge", "Opera"};
static const char *const oses[] = {"Mac OS X", "Windows", "Linux", "iOS", "Android"};
static const char *const paths[] = {"/",
                                    "/pricing",
                                    "/docs/getting-started",
                                    "/blog/2024/launch",
                                    "/app/insights?tab=trends&interval=day",
                                    "/settings/project"};
static const char *const events[] = {"$pageview", "$autocapture", "$pageleave",
                                     "signed_up", "$identify",    "clicked_button"};
/* Already JSON-escaped text, as a browser would send it. */
static const char *const titles[] = {
    "PostHog \\u2013 Product analytics",
    "Caf\xc3\xa9 na \xc5\x81odzi \xe2\x80\x94 Men\xc3\xba",
    "\xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xae\xe5\xa4\xa9\xe6\xb0\x97",
    "Say \\\"hello\\\" to \\ud83d\\ude00 and \xf0\x9f\x9a\x80",
    "Line one\\nLine two\\tTabbed",
    "C:\\\\Users\\\\demo \\/ path",
};

static void str_prop(cm_buf_t *b, const char *k, const char *v)
{
    cm_buf_appendf(b, "\"%s\":\"%s\",", k, v);
}

static void add_properties(cm_buf_t *b, int ev)
{
    const char *path = PICK(paths);
    cm_buf_appendf(b, "\"properties\":{");
    str_prop(b, "$os", PICK(oses));
    cm_buf_appendf(b, "\"$os_version\":\"%u.%u.%u\",", 10 + rnd(5), rnd(20), rnd(10));
    str_prop(b, "$browser", PICK(browsers));
    cm_buf_appendf(b, "\"$device_type\":\"%s\",", rnd(3) ? "Desktop" : "Mobile");
    cm_buf_appendf(b, "\"$current_url\":\"https://app.example.com%s\",", path);
    str_prop(b, "$host", "app.example.com");
    str_prop(b, "$pathname", path);
    str_prop(b, "$raw_user_agent",
             "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like "
             "Gecko) Chrome/124.0.0.0 Safari/537.36");
    cm_buf_appendf(b, "\"$browser_version\":%u,", 100 + rnd(30));
    cm_buf_appendf(b, "\"$browser_language\":\"%s\",", rnd(2) ? "en-US" : "de-DE");
    cm_buf_appendf(b, "\"$screen_height\":%u,\"$screen_width\":%u,", 700 + rnd(800),
                   1200 + rnd(1400));
    cm_buf_appendf(b, "\"$viewport_height\":%u,\"$viewport_width\":%u,", 600 + rnd(600),
                   1000 + rnd(1200));
    str_prop(b, "$lib", "web");
    str_prop(b, "$lib_version", "1.130.2");
    cm_buf_appendf(b, "\"$insert_id\":\"%08x%08x\",", rnd(0x7fffffff), rnd(0x7fffffff));
    cm_buf_appendf(b, "\"$time\":%u.%03u,", 1714564800 + rnd(86400), rnd(1000));
    cm_buf_appendf(b, "\"distinct_id\":\"018f2a5c-%04x-7%03x-8%03x-%012x\",", rnd(65536), rnd(4096),
                   rnd(4096), rnd(0x7fffffff));
    cm_buf_appendf(b, "\"$device_id\":\"018f2a5c-0000-7000-8000-%012x\",", rnd(0x7fffffff));
    str_prop(b, "$initial_referrer", "$direct");
    str_prop(b, "$initial_referring_domain", "$direct");
    str_prop(b, "$referrer", "https://www.google.com/");
    str_prop(b, "$referring_domain", "www.google.com");
    cm_buf_appendf(b, "\"$active_feature_flags\":[\"new-onboarding\",\"beta-insights\"%s],",
                   rnd(2) ? ",\"dark-mode\"" : "");
    cm_buf_appendf(b, "\"$feature/new-onboarding\":true,\"$feature/beta-insights\":\"variant-%c\",",
                   'a' + rnd(3));
    cm_buf_appendf(b, "\"$session_id\":\"018f2a5c-1111-7%03x-9%03x-%012x\",", rnd(4096), rnd(4096),
                   rnd(0x7fffffff));
    cm_buf_appendf(b, "\"$window_id\":\"018f2a5c-2222-7%03x-a%03x-%012x\",", rnd(4096), rnd(4096),
                   rnd(0x7fffffff));
    cm_buf_appendf(b, "\"$pageview_id\":\"018f2a5c-3333-7%03x-b%03x-%012x\",", rnd(4096), rnd(4096),
                   rnd(0x7fffffff));
    cm_buf_appendf(b, "\"title\":\"%s\",", PICK(titles));
    cm_buf_appendf(b, "\"$is_identified\":%s,", rnd(2) ? "true" : "false");
    cm_buf_appendf(
        b,
        "\"$process_person_profile\":true,\"$console_log_recording_enabled_server_side\":false,");
    cm_buf_appendf(b, "\"$session_recording_canvas_recording\":{},\"$replay_sample_rate\":null,");
    cm_buf_appendf(b, "\"$replay_minimum_duration\":null,\"$sdk_debug_retry_queue_size\":%u,",
                   rnd(3));
    cm_buf_appendf(b, "\"utm_source\":%s,\"utm_medium\":null,\"utm_campaign\":null,",
                   rnd(2) ? "\"newsletter\"" : "null");
    cm_buf_appendf(b, "\"gclid\":null,\"fbclid\":null,\"$timezone\":\"Europe/Z\xc3\xbcrich\",");
    cm_buf_appendf(b, "\"$timezone_offset\":-%u,\"$prev_pageview_pathname\":\"/\",", 60 * rnd(3));
    cm_buf_appendf(b, "\"$prev_pageview_duration\":%u.%u,", rnd(600), rnd(10));
    cm_buf_appendf(
        b, "\"$prev_pageview_last_scroll\":%u,\"$prev_pageview_last_scroll_percentage\":0.%02u,",
        rnd(5000), rnd(100));
    cm_buf_appendf(
        b, "\"$prev_pageview_max_scroll\":%u,\"$prev_pageview_max_content_percentage\":%u.%u,",
        rnd(5000), rnd(100), rnd(100));
    cm_buf_appendf(
        b,
        "\"$set\":{\"$os\":\"%s\",\"$browser\":\"%s\",\"$current_url\":\"https://app.example."
        "com/\",\"email\":\"user%u@example.com\",\"name\":\"J\xc3\xbcrgen M\xc3\xbcller\"},",
        PICK(oses), PICK(browsers), rnd(100000));
    cm_buf_appendf(b,
                   "\"$set_once\":{\"$initial_os\":\"%s\",\"$initial_referrer\":\"$direct\","
                   "\"$initial_current_url\":\"https://app.example.com/\"},",
                   PICK(oses));
    cm_buf_appendf(b, "\"$groups\":{\"company\":\"acme-%u\"},", rnd(50));
    cm_buf_appendf(b,
                   "\"cart\":{\"items\":[{\"sku\":\"A-%u\",\"qty\":%u,\"price\":%u.%02u},"
                   "{\"sku\":\"B-%u\",\"qty\":1,\"price\":9.99}],\"currency\":\"EUR\"},",
                   rnd(999), 1 + rnd(4), rnd(200), rnd(100), rnd(999));
    cm_buf_appendf(b, "\"$el_text\":\"%s\",", PICK(titles));
    cm_buf_appendf(b, "\"$event_type\":\"%s\",", rnd(2) ? "click" : "submit");
    cm_buf_appendf(
        b, "\"$ce_version\":1,\"$exception_count\":0,\"$web_vitals_enabled_server_side\":true,");
    cm_buf_appendf(
        b,
        "\"$dead_clicks_enabled_server_side\":false,\"$autocapture_disabled_server_side\":false,");
    cm_buf_appendf(b, "\"$configured_session_timeout_ms\":1800000,\"$lib_custom_api_host\":null,");
    cm_buf_appendf(b, "\"token\":\"phc_bench0123456789abcdefghijklmnopqrstuvwxyzAB\",");
    cm_buf_appendf(b, "\"$sent_at_offset\":%d,\"seq\":%d}", -(int)rnd(1000), ev);
}

static void add_batch(cm_buf_t *b, int batch)
{
    cm_buf_appendf(b,
                   "{\"api_key\":\"phc_bench0123456789abcdefghijklmnopqrstuvwxyzAB\",\"batch\":[");
    for (int e = 0; e < EVENTS_PER_BATCH; e++) {
        cm_buf_appendf(b, "%s{\"uuid\":\"018f2a5c-%04x-7%03x-8%03x-%012x\",\"event\":\"%s\",",
                       e ? "," : "", rnd(65536), rnd(4096), rnd(4096), rnd(0x7fffffff),
                       PICK(events));
        add_properties(b, batch * EVENTS_PER_BATCH + e);
        cm_buf_appendf(b, ",\"timestamp\":\"2024-05-01T12:%02u:%02u.%03uZ\"}", rnd(60), rnd(60),
                       rnd(1000));
    }
    cm_buf_appendf(b, "],\"sent_at\":\"2024-05-01T12:59:59.999Z\"}");
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The lookups an ingest worker does per event; returns a checksum so the
 * work cannot be optimised away. */
static size_t walk(cm_json_t root, cm_buf_t *scratch)
{
    size_t sum = 0;
    cm_json_iter_t it = cm_json_iter(cm_json_get(root, "batch"));
    cm_json_t ev;
    while (cm_json_next(&it, NULL, &ev)) {
        cm_slice_t s;
        cm_buf_reset(scratch);
        cm_json_t props = cm_json_get(ev, "properties");
        if (cm_json_as_str(cm_json_get(ev, "event"), scratch, &s) == 0)
            sum += s.len;
        if (cm_json_as_str(cm_json_get(props, "distinct_id"), scratch, &s) == 0)
            sum += s.len;
        if (cm_json_as_str(cm_json_get(ev, "timestamp"), scratch, &s) == 0)
            sum += s.len;
        if (cm_json_as_str(cm_json_get(props, "$current_url"), scratch, &s) == 0)
            sum += s.len;
        int64_t n;
        if (cm_json_as_int64(cm_json_get(props, "$screen_width"), &n) == 0)
            sum += (size_t)n;
        sum += cm_json_len(props) + cm_json_raw(cm_json_get(props, "$set")).len;
    }
    return sum;
}

typedef enum { PHASE_PARSE, PHASE_WALK, PHASE_WRITE } phase_t;

static void run_phase(phase_t phase, const char *name, cm_buf_t *batches, double seconds)
{
    cm_json_doc_t docs[BATCHES];
    cm_buf_t out = CM_BUF_INIT, scratch = CM_BUF_INIT;
    for (int i = 0; i < BATCHES; i++) {
        docs[i] = CM_JSON_DOC_INIT;
        if (cm_json_parse_into(&docs[i], batches[i].p, batches[i].len, NULL, NULL) != 0) {
            fprintf(stderr, "bench_json: generated batch %d does not parse\n", i);
            exit(1);
        }
    }
    uint64_t rounds = 0, bytes = 0;
    size_t sink = 0;
    double start = now(), elapsed;
    do {
        for (int k = 0; k < 16; k++, rounds++) {
            int i = (int)(rounds % BATCHES);
            if (phase == PHASE_PARSE) {
                sink +=
                    (size_t)cm_json_parse_into(&docs[i], batches[i].p, batches[i].len, NULL, NULL);
                bytes += batches[i].len;
            } else if (phase == PHASE_WALK) {
                sink += walk(cm_json_root(&docs[i]), &scratch);
                bytes += batches[i].len;
            } else {
                cm_json_writer_t w;
                cm_buf_reset(&out);
                cm_json_writer_init(&w, &out);
                cm_json_value(&w, cm_json_root(&docs[i]));
                sink += (size_t)cm_json_writer_finish(&w);
                bytes += out.len;
            }
        }
        elapsed = now() - start;
    } while (elapsed < seconds);
    printf("%s_mb_per_s %.1f\n", name, (double)bytes / elapsed / 1e6);
    printf("%s_events_per_s %.0f\n", name, (double)rounds * EVENTS_PER_BATCH / elapsed);
    if (sink == 1)
        printf("(sink)\n");
    for (int i = 0; i < BATCHES; i++)
        cm_json_doc_clear(&docs[i]);
    cm_buf_free(&out);
    cm_buf_free(&scratch);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    if (seconds <= 0)
        seconds = 2.0;
    cm_buf_t batches[BATCHES];
    size_t total = 0;
    for (int i = 0; i < BATCHES; i++) {
        batches[i] = CM_BUF_INIT;
        add_batch(&batches[i], i);
        total += batches[i].len;
    }
    printf("json_batch_bytes %zu\njson_event_bytes %zu\n", total / BATCHES,
           total / (BATCHES * EVENTS_PER_BATCH));
    run_phase(PHASE_PARSE, "json_parse", batches, seconds);
    run_phase(PHASE_WALK, "json_walk", batches, seconds);
    run_phase(PHASE_WRITE, "json_write", batches, seconds);
    for (int i = 0; i < BATCHES; i++)
        cm_buf_free(&batches[i]);
    return 0;
}
