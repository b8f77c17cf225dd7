/*
 * signals.h - SIGTERM / SIGINT as a loop callback, for graceful drain.
 *
 * The first signal calls on_term(ud) on the loop thread; a second one while
 * draining exits the process at once (an impatient Ctrl-C). SIGPIPE is
 * ignored process-wide, since every write error is handled where it happens.
 */
#ifndef CM_SIGNALS_H
#define CM_SIGNALS_H

struct uv_loop_s;
typedef struct cm_signals cm_signals_t;

cm_signals_t *cm_signals_start(struct uv_loop_s *loop, void (*on_term)(void *ud), void *ud);
/* Closes the signal handles (asynchronously) and frees them. */
void cm_signals_close(cm_signals_t *s);

#endif
