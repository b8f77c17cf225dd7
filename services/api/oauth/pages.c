/*
 * pages.c - the HTML the browser sees during authorization: sign-in,
 * consent and error pages. Every value is escaped; the pages carry no
 * script, may not be framed (clickjacking) and are never cached.
 */
#include <stdio.h>
#include <string.h>

#include "oauth/oauth_int.h"

static void esc(cm_buf_t *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': cm_buf_append_cstr(b, "&amp;"); break;
        case '<': cm_buf_append_cstr(b, "&lt;"); break;
        case '>': cm_buf_append_cstr(b, "&gt;"); break;
        case '"': cm_buf_append_cstr(b, "&quot;"); break;
        case '\'': cm_buf_append_cstr(b, "&#39;"); break;
        default: cm_buf_putc(b, *s);
        }
    }
}

static void head(cm_buf_t *b, const char *title)
{
    cm_buf_append_cstr(b, "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                          "<meta name=\"viewport\" content=\"width=device-width\"><title>");
    esc(b, title);
    cm_buf_append_cstr(b,
                       "</title><style>"
                       "body{font:15px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;"
                       "padding:0 1rem;color:#1d1f27}h1{font-size:1.3rem}"
                       ".app{display:flex;gap:.75rem;align-items:center}"
                       ".app img{width:48px;height:48px;border-radius:8px}"
                       ".notice{background:#fff4d6;border:1px solid #e6b800;padding:.6rem;"
                       "border-radius:6px}.muted{color:#5f6472;font-size:.9rem}"
                       "label{display:block;margin:.6rem 0 .2rem}input,select{width:100%;"
                       "padding:.4rem;box-sizing:border-box}button{margin:.8rem .5rem 0 0;"
                       "padding:.5rem 1rem}code{word-break:break-all}.error{color:#b00020}"
                       "</style></head><body>");
}

static void send_page(api_call_t *call, int status, cm_buf_t *b)
{
    cm_buf_append_cstr(b, "</body></html>");
    cm_http_res_header(call->req, "Cache-Control", "no-store");
    cm_http_res_header(call->req, "X-Frame-Options", "DENY");
    cm_http_res_header(call->req, "Referrer-Policy",
                       "same-origin"); /* no-referrer would send Origin: null */
    cm_http_res_header(call->req, "Content-Security-Policy",
                       /* no form-action: it would also bar the redirect back to
                        * the client that follows the consent form */
                       "default-src 'none'; img-src https:; style-src 'unsafe-inline'; "
                       "frame-ancestors 'none'; base-uri 'none'");
    api_respond_text(call, status, "text/html; charset=utf-8", b);
}

/* The authorization request, carried through a form as hidden fields. */
static void hidden(cm_buf_t *b, const api_oauth_request_t *r)
{
    const char *names[] = {"response_type", "client_id",      "redirect_uri",          "scope",
                           "state",         "code_challenge", "code_challenge_method", "resource"};
    const char *values[] = {r->response_type, r->client_id,      r->redirect_uri, r->scope,
                            r->state,         r->code_challenge, r->method,       r->resource};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (values[i] == NULL)
            continue;
        cm_buf_appendf(b, "<input type=\"hidden\" name=\"%s\" value=\"", names[i]);
        esc(b, values[i]);
        cm_buf_append_cstr(b, "\">");
    }
}

void api_oauth__page_error(api_call_t *call, int status, const char *error, const char *why)
{
    cm_buf_t b = CM_BUF_INIT;
    head(&b, "Authorization failed");
    cm_buf_append_cstr(&b, "<h1>This application cannot be authorized</h1><p class=\"error\">");
    esc(&b, error);
    cm_buf_append_cstr(&b, ": ");
    esc(&b, why);
    cm_buf_append_cstr(&b, "</p><p class=\"muted\">Nothing was shared. You can close this page."
                           "</p>");
    send_page(call, status, &b);
}

static void app_header(cm_buf_t *b, const api_oauth_app_t *app)
{
    cm_buf_append_cstr(b, "<div class=\"app\">");
    if (app->logo_uri) {
        cm_buf_append_cstr(b, "<img id=\"logo\" alt=\"\" src=\"");
        esc(b, app->logo_uri);
        cm_buf_append_cstr(b, "\">");
    }
    cm_buf_append_cstr(b, "<div><strong id=\"client-name\">");
    esc(b, app->name);
    cm_buf_append_cstr(b, "</strong><br><span class=\"muted\">");
    api_oauth_uri_t u;
    if (api_oauth__uri_parse(cm_slice_from_cstr(app->client_id), &u) == 0) {
        char host[300];
        snprintf(host, sizeof(host), "%.*s", (int)u.host.len, u.host.p);
        esc(b, host);
    }
    cm_buf_append_cstr(b, "</span></div></div>");
}

void api_oauth__page_login(api_call_t *call, const api_oauth_request_t *r,
                           const api_oauth_app_t *app, const char *problem)
{
    api_oauth__page_login_status(call, problem ? 401 : 200, r, app, problem);
}

void api_oauth__page_login_status(api_call_t *call, int status, const api_oauth_request_t *r,
                                  const api_oauth_app_t *app, const char *problem)
{
    cm_buf_t b = CM_BUF_INIT;
    head(&b, "Sign in");
    cm_buf_append_cstr(&b, "<h1>Sign in to continue</h1>");
    app_header(&b, app);
    cm_buf_append_cstr(&b, "<p>wants to access your account.</p>");
    if (problem) {
        cm_buf_append_cstr(&b, "<p class=\"error\" id=\"problem\">");
        esc(&b, problem);
        cm_buf_append_cstr(&b, "</p>");
    }
    cm_buf_append_cstr(&b, "<form method=\"post\" action=\"/oauth/authorize\">"
                           "<input type=\"hidden\" name=\"action\" value=\"login\">");
    hidden(&b, r);
    cm_buf_append_cstr(&b, "<label for=\"email\">Email</label>"
                           "<input id=\"email\" name=\"email\" type=\"email\" "
                           "autocomplete=\"username\" required>"
                           "<label for=\"password\">Password</label>"
                           "<input id=\"password\" name=\"password\" type=\"password\" "
                           "autocomplete=\"current-password\" required>"
                           "<button id=\"sign-in\" type=\"submit\">Sign in</button></form>");
    send_page(call, status, &b);
}

void api_oauth__page_consent(api_call_t *call, const api_oauth_request_t *r,
                             const api_oauth_app_t *app, const api_oauth_session_t *s)
{
    cm_buf_t b = CM_BUF_INIT;
    head(&b, "Authorize application");
    cm_buf_append_cstr(&b, "<h1>Authorize access</h1>");
    app_header(&b, app);
    if (!app->verified)
        cm_buf_append_cstr(&b, "<p class=\"notice\" id=\"unverified\">This application is not "
                               "verified. Only continue if you trust its developer.</p>");
    cm_buf_append_cstr(&b, "<p>Signed in as <strong>");
    esc(&b, s->email);
    cm_buf_append_cstr(&b, "</strong>. The application asks to:</p><ul id=\"scopes\">");
    for (size_t i = 0; i < r->nscopes; i++) {
        cm_buf_append_cstr(&b, "<li><code>");
        esc(&b, r->scopes[i]);
        cm_buf_append_cstr(&b, "</code></li>");
    }
    cm_buf_append_cstr(&b, "</ul><p class=\"muted\">Client: <code id=\"client-id\">");
    esc(&b, app->client_id);
    cm_buf_append_cstr(&b, "</code><br>You will be sent back to <code id=\"redirect-host\">");
    api_oauth_uri_t u;
    if (api_oauth__uri_parse(cm_slice_from_cstr(r->redirect_uri), &u) == 0) {
        char host[300];
        snprintf(host, sizeof(host), "%.*s", (int)u.host.len, u.host.p);
        esc(&b, host);
    }
    cm_buf_append_cstr(&b, "</code></p>");
    if (api_oauth__uri_parse(cm_slice_from_cstr(r->redirect_uri), &u) == 0 &&
        api_oauth__loopback(&u)) /* MCP: warn when the code goes to this machine */
        cm_buf_append_cstr(&b, "<p class=\"notice\" id=\"local-redirect\">The answer goes to a "
                               "program on this computer. Only continue if you started it.</p>");
    cm_buf_append_cstr(&b, "<form method=\"post\" action=\"/oauth/authorize\">"
                           "<input type=\"hidden\" name=\"action\" value=\"consent\">"
                           "<input type=\"hidden\" name=\"csrf\" value=\"");
    esc(&b, s->csrf);
    cm_buf_append_cstr(&b, "\">");
    hidden(&b, r);
    cm_buf_append_cstr(&b, "<label for=\"access\">Access</label><select id=\"access\" "
                           "name=\"access\"><option value=\"all\">All your organizations "
                           "and projects</option>");
    for (size_t i = 0; i < s->norgs; i++) {
        cm_buf_append_cstr(&b, "<option value=\"organization:");
        esc(&b, s->orgs[i].id);
        cm_buf_append_cstr(&b, "\">Organization ");
        esc(&b, s->orgs[i].name);
        cm_buf_append_cstr(&b, "</option>");
    }
    for (size_t i = 0; i < s->nprojects; i++) {
        cm_buf_append_cstr(&b, "<option value=\"project:");
        esc(&b, s->projects[i].id);
        cm_buf_append_cstr(&b, "\">Project ");
        esc(&b, s->projects[i].name);
        cm_buf_append_cstr(&b, "</option>");
    }
    cm_buf_append_cstr(&b, "</select><button id=\"approve\" name=\"decision\" value=\"approve\" "
                           "type=\"submit\">Authorize</button><button id=\"deny\" "
                           "name=\"decision\" value=\"deny\" type=\"submit\">Deny</button>"
                           "</form>");
    send_page(call, 200, &b);
}
