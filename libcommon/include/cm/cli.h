/*
 * cli.h - the command-line arguments every binary shares, answered before
 * anything starts (no configuration read, no port bound):
 *
 *   static const cm_cli_t cli = {"ingest", "event capture into the queue", NULL, NULL};
 *   int rc = cm_cli_handle(&cli, argc, argv);
 *   if (rc >= 0) return rc;               (--help, --version, or refused)
 *
 *   --help, -h       the usage on stdout, exit 0
 *   --version        "<name> <version>" on stdout, exit 0; the version is the
 *                    Makefile's CM_VERSION, the one place it is written
 *   --print-config   left to cm_service_config (cm/service.h), alone
 *   anything else    "unknown argument" and the usage on stderr, exit 2,
 *                    except a first argument not starting with '-' when the
 *                    binary has commands (cli.commands): that is the caller's
 *                    to dispatch (and refuse).
 */
#ifndef CM_CLI_H
#define CM_CLI_H

#include <stdio.h>

typedef struct {
    const char *name;     /* the binary: "api" */
    const char *about;    /* one line: what it is */
    const char *commands; /* NULL, or the command lines of the usage (a first argument
                             not starting with '-' then goes to the caller) */
    const char *notes;    /* NULL, or more text after the options */
} cm_cli_t;

/* The project's version ("0.1.0"). */
const char *cm_version(void);

/* The shared arguments, as above: the exit code (0 or 2) once answered or
 * refused, or -1 for the caller to go on. */
int cm_cli_handle(const cm_cli_t *cli, int argc, char **argv);

/* cm_cli_handle writing to out (help, version) and err (refusals). */
int cm_cli_handle_to(const cm_cli_t *cli, int argc, char **argv, FILE *out, FILE *err);

/* The usage text, as --help prints it. */
void cm_cli_usage(const cm_cli_t *cli, FILE *to);

#endif
