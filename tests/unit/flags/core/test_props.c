/*
 * test_props.c - the operator table: one row per (filter, person, expected
 * answer of posthog-node, expected answer of the flags server).
 *
 * Rows are written with single quotes for readability (q() turns them into
 * JSON's double quotes). Answers: T true, F false, I posthog-node gives up
 * (InconclusiveMatchError), R it gives up because of a regex only the
 * server can run, E cannot be computed. The product answer (flg_prop_match)
 * must be the node answer when it is T/F, else the server's; every row
 * checks that too. "now" is 2024-06-15T12:00:00Z, the zone UTC.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/snapshot.h"
#include "core/props.h"

#define NOW_MS INT64_C(1718452800000)

typedef struct {
    const char *filter;
    const char *props;
    char node, server;
    int pmv; /* property_matching_version */
} row_t;

static char *q(const char *s)
{
    char *c = strdup(s);
    for (char *p = c; *p; p++)
        if (*p == '\'')
            *p = '"';
    return c;
}

static char code(flg_match_t m)
{
    switch (m) {
    case FLG_M_TRUE: return 'T';
    case FLG_M_FALSE: return 'F';
    case FLG_M_INC: return 'I';
    case FLG_M_INC_REGEX: return 'R';
    case FLG_M_SERVER: return 'S';
    default: return 'E';
    }
}

static int run_row(const row_t *r, int line)
{
    char *filter = q(r->filter), *props = q(r->props);
    char defs[4096];
    snprintf(defs, sizeof defs,
             "{\"flags\":[{\"key\":\"f\",\"active\":true,\"filters\":{\"groups\":"
             "[{\"properties\":[%s]}]}}],\"property_matching_version\":%d}",
             filter, r->pmv ? r->pmv : 1);
    flg_snapshot_t *s = NULL;
    cm_json_doc_t *pdoc = NULL, *aux = NULL;
    int failures = 0;
    if (flg_snapshot_load(defs, strlen(defs), &s, NULL) != 0 ||
        cm_json_parse(props, strlen(props), NULL, &pdoc, NULL) != 0 ||
        cm_json_parse("[\"user-1\"]", 10, NULL, &aux, NULL) != 0) {
        fprintf(stderr, "row at line %d: bad JSON\n", line);
        failures = 1;
        goto out;
    }
    const flg_flag_t *f = flg_snapshot_flag(s, 0);
    if (f->invalid || f->nconds != 1 || f->conds[0].nfilters != 1) {
        fprintf(stderr, "row at line %d: filter rejected (%s)\n", line, f->invalid);
        failures = 1;
        goto out;
    }
    const flg_filter_t *flt = &f->conds[0].filters[0];
    flg_bag_t bag = {cm_json_root(pdoc), CM_SLICE_LIT("distinct_id"),
                     cm_json_at(cm_json_root(aux), 0), true};
    flg_pctx_t pc = {NOW_MS, NULL, flg_snapshot_explicit_exact(s), CM_BUF_INIT, CM_BUF_INIT};
    char node = code(flg_prop_match_node(flt, &bag, &pc));
    char server = code(flg_prop_match_server(flt, &bag, &pc));
    char both = code(flg_prop_match(flt, &bag, &pc));
    char want_both = (r->node == 'T' || r->node == 'F' || r->node == 'E') ? r->node : r->server;
    if (node != r->node || server != r->server || both != want_both) {
        fprintf(stderr, "line %d: %s vs %s: node %c (want %c), server %c (want %c), product %c\n",
                line, r->filter, r->props, node, r->node, server, r->server, both);
        failures = 1;
    }
    cm_buf_free(&pc.a);
    cm_buf_free(&pc.b);
out:
    flg_snapshot_unref(s);
    cm_json_doc_free(pdoc);
    cm_json_doc_free(aux);
    free(filter);
    free(props);
    return failures;
}

#define ROW(f, p, n, sv)                                                                           \
    {                                                                                              \
        f, p, n, sv, 0                                                                             \
    }
#define ROW2(f, p, n, sv)                                                                          \
    {                                                                                              \
        f, p, n, sv, 2                                                                             \
    }

static const row_t EXACT[] = {
    ROW("{'key':'email','value':'test@posthog.com'}", "{'email':'test@posthog.com'}", 'T', 'T'),
    ROW("{'key':'email','value':'test@posthog.com'}", "{'email':'TEST@PostHog.com'}", 'T', 'T'),
    ROW("{'key':'email','value':'test@posthog.com'}", "{}", 'I', 'F'),
    ROW("{'key':'c','operator':'exact','value':['US','CA','Uk']}", "{'c':'us'}", 'T', 'T'),
    ROW("{'key':'c','operator':'exact','value':['US','CA','Uk']}", "{'c':'UK'}", 'T', 'T'),
    ROW("{'key':'c','operator':'exact','value':['US','CA','Uk']}", "{'c':'de'}", 'F', 'F'),
    ROW("{'key':'c','operator':'exact','value':[]}", "{'c':'us'}", 'F', 'F'),
    ROW("{'key':'c','operator':'exact','value':'false'}", "{'c':'banana'}", 'T', 'T'),
    ROW("{'key':'c','operator':'exact','value':'false'}", "{'c':''}", 'T', 'T'),
    ROW("{'key':'c','operator':'exact','value':'true'}", "{'c':true}", 'T', 'T'),
    ROW("{'key':'c','operator':'exact','value':true}", "{'c':'TRUE'}", 'T', 'T'),
    ROW("{'key':'c','operator':'exact','value':['true']}", "{'c':true}", 'T', 'T'),
    ROW("{'key':'c','operator':'exact','value':'1'}", "{'c':1}", 'I', 'T'),
    ROW("{'key':'c','operator':'exact','value':'1.5'}", "{'c':1.5}", 'T', 'T'),
    ROW("{'key':'c','operator':'exact','value':5}", "{'c':'5'}", 'I', 'T'),
    ROW("{'key':'c','operator':'exact','value':'1.0'}", "{'c':1.0}", 'I', 'T'),
    ROW("{'key':'c','operator':'exact','value':{'b':1.5,'a':'x'}}", "{'c':{'a':'x','b':1.5}}", 'T',
        'T'),
    ROW("{'key':'c','operator':'exact','value':'\\u00dcn\\u00efc\\u00f6d\\u00e9'}",
        "{'c':'\\u00fcN\\u00cfC\\u00d6D\\u00c9'}", 'T', 'T'),
    ROW("{'key':'c','operator':'exact','value':'\\u03b1\\u03c2'}", "{'c':'\\u0391\\u03a3'}", 'T',
        'T'),
    ROW("{'key':'c','operator':'exact','value':[1.5,'x']}", "{'c':'x'}", 'T', 'T'),
    ROW("{'key':'c','operator':'exact','value':[1,'us']}", "{'c':'us'}", 'I', 'T'),
    ROW("{'key':'c','operator':'exact','value':['us',1]}", "{'c':'us'}", 'T', 'T'),
    ROW("{'key':'c','operator':'exact','value':null}", "{'c':null}", 'T', 'F'),
    ROW("{'key':'c','operator':'exact'}", "{'c':'x'}", 'I', 'F'),
    ROW("{'key':'c','operator':'is_not','value':'value'}", "{'c':''}", 'T', 'T'),
    ROW("{'key':'c','operator':'is_not','value':'value'}", "{'c':null}", 'T', 'T'),
    ROW("{'key':'c','operator':'is_not','value':'value'}", "{}", 'I', 'T'),
    ROW("{'key':'c','operator':'is_not','value':['a','b']}", "{'c':'a'}", 'F', 'F'),
    ROW("{'key':'distinct_id','value':'user-1'}", "{}", 'T', 'T'),
    ROW("{'key':'distinct_id','value':'user-1'}", "{'distinct_id':'other'}", 'F', 'F'),
    ROW("{'key':'$initial_browser','value':'Chrome'}", "{'$browser':'Chrome'}", 'I', 'T'),
    ROW("{'key':'$initial_utm_source','value':'x'}", "{'utm_source':'x'}", 'I', 'T'),
    ROW2("{'key':'c','operator':'exact','value':'false'}", "{'c':'banana'}", 'F', 'F'),
    ROW2("{'key':'c','operator':'exact','value':true}", "{'c':1}", 'F', 'F'),
    ROW2("{'key':'c','operator':'exact','value':'true'}", "{'c':'TRUE'}", 'T', 'T'),
    ROW2("{'key':'c','operator':'exact','value':'true'}", "{'c':true}", 'T', 'T'),
    ROW2("{'key':'c','operator':'exact','value':[]}", "{'c':'x'}", 'F', 'F'),
};

static const row_t TEXT[] = {
    ROW("{'key':'c','operator':'icontains','value':'valUe'}", "{'c':'vaLue4'}", 'T', 'T'),
    ROW("{'key':'c','operator':'icontains','value':'valUe'}", "{'c':'343tfvalue5'}", 'T', 'T'),
    ROW("{'key':'c','operator':'icontains','value':'valUe'}", "{'c':123}", 'F', 'F'),
    ROW("{'key':'c','operator':'icontains','value':'3'}", "{'c':323}", 'T', 'T'),
    ROW("{'key':'c','operator':'not_icontains','value':'x'}", "{}", 'I', 'T'),
    ROW("{'key':'c','operator':'icontains','value':'null'}", "{'c':null}", 'T', 'T'),
    ROW("{'key':'c','operator':'icontains','value':'\\u00e9'}", "{'c':'\\u00c9'}", 'F', 'F'),
    ROW("{'key':'c','operator':'icontains','value':'a,b'}", "{'c':['a','b']}", 'T', 'F'),
    ROW("{'key':'c','operator':'icontains','value':1.5}", "{'c':'x1.5'}", 'T', 'T'),
    ROW("{'key':'c','operator':'starts_with','value':'Val'}", "{'c':'value'}", 'T', 'T'),
    ROW("{'key':'c','operator':'not_starts_with','value':'Val'}", "{'c':'xvalue'}", 'T', 'T'),
    ROW("{'key':'c','operator':'ends_with','value':'UE'}", "{'c':'value'}", 'T', 'T'),
    ROW("{'key':'c','operator':'not_ends_with','value':'x'}", "{'c':'value'}", 'T', 'T'),
    ROW("{'key':'c','operator':'ends_with','value':'value'}", "{'c':'ue'}", 'F', 'F'),
    ROW("{'key':'c','operator':'icontains_multi','value':['us','de']}", "{'c':'xDEx'}", 'I', 'T'),
    ROW("{'key':'c','operator':'not_icontains_multi','value':['a']}", "{'c':'b'}", 'I', 'T'),
    ROW("{'key':'c','operator':'icontains_multi','value':['us']}", "{'c':null}", 'F', 'F'),
    ROW("{'key':'c','operator':'not_icontains_multi','value':['us']}", "{}", 'I', 'T'),
};

static const row_t REGEX[] = {
    ROW("{'key':'c','operator':'regex','value':'^test'}", "{'c':'test@x.com'}", 'T', 'T'),
    ROW("{'key':'c','operator':'regex','value':'@posthog\\\\.com$'}", "{'c':'a@posthog.com'}", 'T',
        'T'),
    ROW("{'key':'c','operator':'not_regex','value':'[0-9]+'}", "{'c':'abc'}", 'T', 'T'),
    ROW("{'key':'c','operator':'regex','value':'[a-'}", "{'c':'a'}", 'F', 'F'),
    ROW("{'key':'c','operator':'not_regex','value':'[a-'}", "{'c':'a'}", 'F', 'F'),
    ROW("{'key':'c','operator':'regex','value':'(?i)US'}", "{'c':'us'}", 'R', 'T'),
    ROW("{'key':'c','operator':'regex','value':'\\u00fc'}", "{'c':'\\u00fc'}", 'R', 'T'),
    ROW("{'key':'c','operator':'regex','value':'a'}", "{'c':'\\u00f1a'}", 'R', 'T'),
    ROW("{'key':'c','operator':'regex','value':'x'}", "{'c':'x\\ry'}", 'R', 'T'),
    ROW("{'key':'c','operator':'regex','value':''}", "{'c':'anything'}", 'T', 'T'),
    ROW("{'key':'c','operator':'not_regex','value':''}", "{'c':'anything'}", 'F', 'F'),
    ROW("{'key':'c','operator':'regex','value':'a**'}", "{'c':'aa'}", 'F', 'F'),
    ROW("{'key':'c','operator':'regex','value':'\\\\d{2,}'}", "{'c':'a12'}", 'T', 'T'),
    ROW("{'key':'c','operator':'regex','value':'[\\\\d-z]'}", "{'c':'-'}", 'R', 'F'),
    ROW("{'key':'c','operator':'regex','value':'[\\\\@]'}", "{'c':'@'}", 'R', 'T'),
    ROW("{'key':'c','operator':'regex','value':'\\\\v'}", "{'c':'\\u000b'}", 'T', 'T'),
    ROW("{'key':'c','operator':'regex','value':'\\\\v'}", "{'c':'\\n'}", 'F', 'F'),
    ROW("{'key':'c','operator':'regex','value':'a$'}", "{'c':'ba\\n'}", 'F', 'F'),
    ROW("{'key':'c','operator':'regex','value':'a.c'}", "{'c':'a\\nc'}", 'F', 'F'),
    ROW("{'key':'c','operator':'regex','value':'^\\\\S+$'}", "{'c':'abc'}", 'T', 'T'),
    ROW("{'key':'c','operator':'regex','value':'\\\\bword'}", "{'c':'a word'}", 'R', 'T'),
    ROW("{'key':'c','operator':'regex','value':123}", "{'c':'x123'}", 'T', 'T'),
    ROW("{'key':'c','operator':'regex','value':'(a|b)*c'}", "{'c':'ababc'}", 'T', 'T'),
    ROW("{'key':'c','operator':'regex','value':'a{3,1}'}", "{'c':'aaa'}", 'F', 'F'),
    ROW("{'key':'c','operator':'regex','value':'^[a-z]{2}$'}", "{'c':12}", 'F', 'F'),
    ROW("{'key':'c','operator':'regex','value':'^1.5$'}", "{'c':1.5}", 'T', 'T'),
    ROW("{'key':'c','operator':'not_regex','value':'x'}", "{}", 'I', 'T'),
    ROW("{'key':'c','operator':'regex','value':'x'}", "{}", 'I', 'F'),
    ROW("{'key':'c','operator':'regex','value':'(a|aa)*$'}",
        "{'c':'"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "ab'}",
        'E', 'E'),
};

static const row_t NUMERIC[] = {
    ROW("{'key':'c','operator':'gt','value':10}", "{'c':11}", 'T', 'T'),
    ROW("{'key':'c','operator':'gt','value':10}", "{'c':'11'}", 'T', 'T'),
    ROW("{'key':'c','operator':'gt','value':10}", "{'c':9}", 'F', 'F'),
    ROW("{'key':'c','operator':'gt','value':10}", "{'c':'abc'}", 'T', 'F'),
    ROW("{'key':'c','operator':'gt','value':'10'}", "{'c':'9'}", 'F', 'F'),
    ROW("{'key':'c','operator':'lt','value':'abc'}", "{'c':'abd'}", 'F', 'F'),
    ROW("{'key':'c','operator':'gt','value':10}", "{'c':'12abc'}", 'T', 'F'),
    ROW("{'key':'c','operator':'gte','value':3.5}", "{'c':3.5}", 'T', 'T'),
    ROW("{'key':'c','operator':'lte','value':0}", "{'c':-1}", 'T', 'T'),
    ROW("{'key':'c','operator':'gt','value':10}", "{'c':null}", 'F', 'F'),
    ROW("{'key':'c','operator':'gt','value':10}", "{}", 'I', 'F'),
    ROW("{'key':'c','operator':'gt','value':1}", "{'c':true}", 'T', 'F'),
    ROW("{'key':'c','operator':'gt','value':'m'}", "{'c':'n'}", 'T', 'F'),
    ROW("{'key':'c','operator':'lt','value':10}", "{'c':'  5 '}", 'T', 'F'),
    ROW("{'key':'c','operator':'gt','value':1}", "{'c':[5]}", 'T', 'F'),
    ROW("{'key':'c','operator':'gt','value':100}", "{'c':1e21}", 'T', 'T'),
    ROW("{'key':'c','operator':'lt','value':'1e3'}", "{'c':999}", 'T', 'T'),
    ROW("{'key':'c','operator':'between','value':[1,10]}", "{'c':5}", 'I', 'T'),
    ROW("{'key':'c','operator':'between','value':[1,10]}", "{'c':11}", 'I', 'F'),
    ROW("{'key':'c','operator':'between','value':[10,1]}", "{'c':5}", 'I', 'F'),
    ROW("{'key':'c','operator':'not_between','value':[1,10]}", "{}", 'I', 'T'),
    ROW("{'key':'c','operator':'not_between','value':[1,10]}", "{'c':'20'}", 'I', 'T'),
    ROW("{'key':'c','operator':'between','value':[1,10]}", "{'c':null}", 'F', 'F'),
    ROW("{'key':'c','operator':'is_set','value':'x'}", "{'c':null}", 'T', 'T'),
    ROW("{'key':'c','operator':'is_set','value':'x'}", "{}", 'I', 'F'),
    ROW("{'key':'c','operator':'is_not_set','value':'x'}", "{'c':1}", 'F', 'F'),
    ROW("{'key':'c','operator':'is_not_set','value':'x'}", "{}", 'I', 'T'),
    ROW("{'key':'c','operator':'frobnicate','value':'x'}", "{'c':'x'}", 'I', 'E'),
    ROW("{'key':'c','operator':'frobnicate','value':'x'}", "{'c':null}", 'F', 'E'),
    ROW("{'key':'c','operator':'in','value':'x'}", "{'c':'x'}", 'I', 'F'),
};

static const row_t DATES[] = {
    ROW("{'key':'d','operator':'is_date_before','value':'2024-01-01'}", "{'d':'2023-12-31'}", 'T',
        'T'),
    ROW("{'key':'d','operator':'is_date_after','value':'-7d'}", "{'d':'2024-06-10T00:00:00Z'}", 'T',
        'T'),
    ROW("{'key':'d','operator':'is_date_after','value':'-7d'}", "{'d':'2024-06-08T11:00:00Z'}", 'F',
        'F'),
    ROW("{'key':'d','operator':'is_date_after','value':'-1m'}", "{'d':'2024-05-16'}", 'T', 'T'),
    ROW("{'key':'d','operator':'is_date_before','value':'-1y'}", "{'d':'2023-06-14'}", 'T', 'T'),
    ROW("{'key':'d','operator':'is_date_after','value':'1w'}", "{'d':'2024-06-09'}", 'T', 'T'),
    ROW("{'key':'d','operator':'is_date_after','value':'-1h'}", "{'d':'2024-06-15T11:30:00Z'}", 'T',
        'T'),
    ROW("{'key':'d','operator':'is_date_before','value':'2024-01-01'}", "{'d':1700000000000}", 'T',
        'F'),
    ROW("{'key':'d','operator':'is_date_before','value':'2024-01-01'}", "{'d':'1700000000'}", 'I',
        'T'),
    ROW("{'key':'d','operator':'is_date_after','value':true}", "{'d':'2024-01-01'}", 'I', 'F'),
    ROW("{'key':'d','operator':'is_date_before','value':'garbage'}", "{'d':'2024-01-01'}", 'I',
        'F'),
    ROW("{'key':'d','operator':'is_date_before','value':'2024-01-01'}", "{'d':'42'}", 'F', 'T'),
    ROW("{'key':'d','operator':'is_date_before','value':'2024-01-01'}", "{'d':'Jan 15 2023'}", 'T',
        'F'),
    ROW("{'key':'d','operator':'is_date_exact','value':'2024-01-01'}",
        "{'d':'2024-01-01T00:00:00Z'}", 'I', 'T'),
    ROW("{'key':'d','operator':'is_date_after','value':'-7D'}", "{'d':'2024-06-14'}", 'I', 'F'),
    ROW("{'key':'d','operator':'is_date_before','value':'2024-01-15 10:00:00'}",
        "{'d':'2024-01-15T09:00:00Z'}", 'T', 'T'),
    ROW("{'key':'d','operator':'is_date_before','value':1718452800000}",
        "{'d':'2024-06-15T11:59:59.999Z'}", 'T', 'F'),
    ROW("{'key':'d','operator':'is_date_before','value':'2024-01-01'}", "{'d':null}", 'F', 'F'),
    ROW("{'key':'d','operator':'is_date_before','value':'2024-01-01'}", "{'d':true}", 'I', 'F'),
    ROW("{'key':'d','operator':'is_date_after','value':'2024-01-01T00:00:00+02:00'}",
        "{'d':'2023-12-31T23:00:00Z'}", 'T', 'T'),
    ROW("{'key':'d','operator':'is_date_after','value':'-10000d'}", "{'d':'2024-01-01'}", 'I', 'F'),
};

static const row_t SEMVER[] = {
    ROW("{'key':'v','operator':'semver_eq','value':'1.2.3'}", "{'v':'1.2.3'}", 'T', 'T'),
    ROW("{'key':'v','operator':'semver_eq','value':'1.2.3'}", "{'v':'v1.2.3'}", 'T', 'T'),
    ROW("{'key':'v','operator':'semver_eq','value':'1.2.3'}", "{'v':'1.2.3-beta'}", 'T', 'F'),
    ROW("{'key':'v','operator':'semver_gt','value':'1.2.3'}", "{'v':'1.10.0'}", 'T', 'T'),
    ROW("{'key':'v','operator':'semver_lt','value':'1.2.3'}", "{'v':'1.2.3-beta'}", 'F', 'T'),
    ROW("{'key':'v','operator':'semver_eq','value':'1.2.3'}", "{'v':'01.2.3'}", 'I', 'T'),
    ROW("{'key':'v','operator':'semver_eq','value':'1.2'}", "{'v':'1.2.0'}", 'T', 'T'),
    ROW("{'key':'v','operator':'semver_eq','value':'1.2.3'}", "{'v':'1.2.3.4'}", 'T', 'F'),
    ROW("{'key':'v','operator':'semver_gte','value':'abc'}", "{'v':'1.0.0'}", 'I', 'F'),
    ROW("{'key':'v','operator':'semver_tilde','value':'1.2.3'}", "{'v':'1.2.9'}", 'T', 'T'),
    ROW("{'key':'v','operator':'semver_tilde','value':'1.2.3'}", "{'v':'1.3.0'}", 'F', 'F'),
    ROW("{'key':'v','operator':'semver_caret','value':'0.1.0'}", "{'v':'0.1.5'}", 'T', 'T'),
    ROW("{'key':'v','operator':'semver_caret','value':'0.1.0'}", "{'v':'0.2.0'}", 'F', 'F'),
    ROW("{'key':'v','operator':'semver_caret','value':'0.0.1'}", "{'v':'0.0.2'}", 'F', 'F'),
    ROW("{'key':'v','operator':'semver_caret','value':'1.2.3'}", "{'v':'1.9.0'}", 'T', 'T'),
    ROW("{'key':'v','operator':'semver_wildcard','value':'1.*'}", "{'v':'1.9.9'}", 'T', 'T'),
    ROW("{'key':'v','operator':'semver_wildcard','value':'1.*'}", "{'v':'2.0.0'}", 'F', 'F'),
    ROW("{'key':'v','operator':'semver_wildcard','value':'1.2.*'}", "{'v':'1.2.7'}", 'T', 'T'),
    ROW("{'key':'v','operator':'semver_wildcard','value':'*'}", "{'v':'1.0.0'}", 'I', 'T'),
    ROW("{'key':'v','operator':'semver_wildcard','value':'1.*.*'}", "{'v':'1.4.0'}", 'I', 'T'),
    ROW("{'key':'v','operator':'semver_neq','value':'1.0.0'}", "{'v':1}", 'F', 'F'),
    ROW("{'key':'v','operator':'semver_gt','value':'1.0.0'}", "{'v':null}", 'F', 'F'),
    ROW("{'key':'v','operator':'semver_gt','value':'1.0.0'}", "{}", 'I', 'F'),
    ROW("{'key':'v','operator':'semver_eq','value':'1.2.3'}", "{'v':'  1.2.3  '}", 'T', 'T'),
    ROW("{'key':'v','operator':'semver_gt','value':'1.0.0'}", "{'v':'1.0.0+build'}", 'F', 'F'),
    ROW("{'key':'v','operator':'semver_lt','value':'1.0.0-rc.1'}", "{'v':'1.0.0-beta.11'}", 'F',
        'T'),
    ROW("{'key':'v','operator':'semver_gt','value':'1.0.0-alpha'}", "{'v':'1.0.0-alpha.1'}", 'F',
        'T'),
};

static void run_table(const row_t *rows, size_t n)
{
    int failures = 0;
    for (size_t i = 0; i < n; i++)
        failures += run_row(&rows[i], (int)i);
    assert_int_equal(failures, 0);
}

#define TABLE(name, rows)                                                                          \
    static void name(void **state)                                                                 \
    {                                                                                              \
        (void)state;                                                                               \
        run_table(rows, sizeof rows / sizeof rows[0]);                                             \
    }

TABLE(test_exact, EXACT)
TABLE(test_text, TEXT)
TABLE(test_regex, REGEX)
TABLE(test_numeric_and_presence, NUMERIC)
TABLE(test_dates, DATES)
TABLE(test_semver, SEMVER)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact), cmocka_unit_test(test_text),
        cmocka_unit_test(test_regex), cmocka_unit_test(test_numeric_and_presence),
        cmocka_unit_test(test_dates), cmocka_unit_test(test_semver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
