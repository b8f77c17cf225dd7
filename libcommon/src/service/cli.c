/*
 * cli.c - --help, --version and unknown arguments for every binary
 * (cm/cli.h). It runs first in main(), so none of these depends on the
 * environment being a valid configuration, and none starts the service.
 */
#include "cm/cli.h"

#include <stdbool.h>
#include <string.h>

/* Set by the Makefile from its CM_VERSION (the one place the version is
 * written); a build without it says so rather than invent one. */
#ifndef CM_VERSION
#define CM_VERSION "unknown (built without the Makefile's CM_VERSION)"
#endif

const char *cm_version(void)
{
    return CM_VERSION;
}

void cm_cli_usage(const cm_cli_t *cli, FILE *to)
{
    fprintf(to, "%s %s - %s\n\n", cli->name, CM_VERSION, cli->about);
    if (cli->commands) {
        fprintf(to, "usage: %s [COMMAND]\n       %s --print-config | --help | --version\n\n",
                cli->name, cli->name);
        fprintf(to, "  (no command)     start the service\n%s", cli->commands);
    } else {
        fprintf(to, "usage: %s [--print-config | --help | --version]\n\n", cli->name);
        fprintf(to, "  (no argument)    start the service\n");
    }
    fprintf(to, "  --print-config   print the effective configuration (every variable with its\n"
                "                   value or default; secrets hidden) and exit\n"
                "  --help, -h       print this text and exit\n"
                "  --version        print the version and exit\n\n");
    if (cli->notes)
        fprintf(to, "%s\n", cli->notes);
    fprintf(to, "Configured by environment variables only; docs/configuration.md lists them\n"
                "with their defaults. Logs are JSON lines on stderr.\n");
}

static int refuse(const cm_cli_t *cli, const char *arg, FILE *err)
{
    fprintf(err, "%s: unknown argument '%s'\n\n", cli->name, arg);
    cm_cli_usage(cli, err);
    return 2;
}

int cm_cli_handle_to(const cm_cli_t *cli, int argc, char **argv, FILE *out, FILE *err)
{
    if (argc < 2)
        return -1;
    const char *first = argv[1];
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0) {
        if (argc > 2)
            return refuse(cli, argv[2], err);
        cm_cli_usage(cli, out);
        return 0;
    }
    if (strcmp(first, "--version") == 0) {
        if (argc > 2)
            return refuse(cli, argv[2], err);
        fprintf(out, "%s %s\n", cli->name, CM_VERSION);
        return 0;
    }
    if (strcmp(first, "--print-config") == 0)
        return argc > 2 ? refuse(cli, argv[2], err) : -1;
    if (cli->commands && first[0] != '-')
        return -1; /* a command: the caller dispatches it (and refuses an unknown one) */
    return refuse(cli, first, err);
}

int cm_cli_handle(const cm_cli_t *cli, int argc, char **argv)
{
    return cm_cli_handle_to(cli, argc, argv, stdout, stderr);
}
